"""Grad mode and inference mode: context managers, decorators, nesting,
thread locality, and their link to the dispatcher's thread-local key sets."""
from __future__ import annotations

import threading

import pytest

import torchlet as T
from torchlet._C import lib


def leaf():
    return T.ones(3).requires_grad_()


def records(t):
    return (t * 2).grad_fn is not None


def test_default_on():
    assert T.is_grad_enabled() and not T.is_inference_mode_enabled()
    assert T.autograd.is_grad_enabled is T.is_grad_enabled


def test_no_grad_context_and_nesting():
    a = leaf()
    with T.no_grad():
        assert not T.is_grad_enabled() and not records(a)
        with T.enable_grad():
            assert T.is_grad_enabled() and records(a)
            with T.no_grad():
                assert not records(a)
            assert records(a)
        assert not records(a)
    assert T.is_grad_enabled() and records(a)


def test_no_grad_excludes_the_autograd_keys():
    # grad mode IS the dispatcher's TLS exclusion of the Autograd keys
    ag = lib.tl_keyset_autograd()
    before = lib.tl_tls_get_excluded()
    with T.no_grad():
        assert lib.tl_tls_get_excluded() & ag == ag
    assert lib.tl_tls_get_excluded() == before
    with T.inference_mode():
        ex = lib.tl_tls_get_excluded()
        assert ex & ag == ag and ex & (1 << lib.TL_KEY_AD_INPLACE_OR_VIEW)
    assert lib.tl_tls_get_excluded() == before


def test_restores_on_exception():
    with pytest.raises(ValueError):
        with T.no_grad():
            raise ValueError
    assert T.is_grad_enabled()


def test_decorators_with_and_without_parentheses():
    a = leaf()

    @T.no_grad()
    def f1():
        return records(a), T.is_grad_enabled()

    @T.no_grad
    def f2():
        return records(a)

    @T.enable_grad()
    def f3():
        return records(a)

    @T.inference_mode
    def f4():
        return T.is_inference_mode_enabled()

    @T.inference_mode()
    def f5():
        return T.is_inference_mode_enabled()

    @T.set_grad_enabled(False)
    def f6():
        return T.is_grad_enabled()

    assert f1() == (False, False) and f2() is False
    with T.no_grad():
        assert f3() is True
    assert f4() is True and f5() is True
    assert T.is_grad_enabled()
    assert f6() is False
    assert T.is_grad_enabled()  # decorating did not leave grad mode off
    assert f1.__name__ == "f1"


def test_decorated_generator():
    @T.no_grad()
    def gen():
        for _ in range(2):
            yield T.is_grad_enabled()

    assert list(gen()) == [False, False]
    assert T.is_grad_enabled()


def test_set_grad_enabled_function_and_context():
    a = leaf()
    T.set_grad_enabled(False)
    try:
        assert not T.is_grad_enabled() and not records(a)
    finally:
        T.set_grad_enabled(True)
    assert T.is_grad_enabled()
    with T.set_grad_enabled(False):
        assert not records(a)
        with T.set_grad_enabled(True):
            assert records(a)
        assert not T.is_grad_enabled()
    assert T.is_grad_enabled()
    with pytest.raises(TypeError):
        T.set_grad_enabled(1)


def test_inference_mode_false_enables_grad():
    a = leaf()
    with T.no_grad():
        with T.inference_mode(False):
            assert T.is_grad_enabled() and not T.is_inference_mode_enabled() and records(a)
        assert not T.is_grad_enabled()
    with T.inference_mode():
        assert not records(a)
        with T.inference_mode(mode=False):
            assert records(a)
        assert T.is_inference_mode_enabled()


def test_grad_mode_is_thread_local():
    seen = {}

    def worker():
        seen["start"] = T.is_grad_enabled()  # a new thread starts with grad mode on
        T.set_grad_enabled(False)
        seen["after"] = T.is_grad_enabled()
        a = T.ones(2).requires_grad_()
        seen["records"] = records(a)

    with T.no_grad():
        th = threading.Thread(target=worker)
        th.start()
        th.join()
        assert not T.is_grad_enabled()
    assert seen == {"start": True, "after": False, "records": False}
    assert T.is_grad_enabled()


def test_backward_inside_no_grad_still_works():
    a = leaf()
    y = (a * a).sum()
    with T.no_grad():
        y.backward()
    assert a.grad is not None and a.grad.tolist() == [2.0, 2.0, 2.0]
    assert not a.grad.requires_grad


def test_engine_restores_grad_mode():
    a = leaf()
    (a * a).sum().backward(create_graph=True)  # runs the formulas with grad mode on
    assert T.is_grad_enabled()
    b = leaf()
    y = (b * b).sum()
    with T.no_grad():
        y.backward()  # runs them with grad mode off
        assert not T.is_grad_enabled()
    assert T.is_grad_enabled()
