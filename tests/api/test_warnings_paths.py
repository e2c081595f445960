"""Runtime warnings on every Python path, not only the generated bindings
(docs/PYTHON_BINDINGS.md, "Warnings"): hand-written callers of C entry points
(_tensor._wrap, _rt, tests), backward / autograd.grad, torchlet.library's
boxed calls. A warning is shown at the call that recorded it, before that
call's error, and never left pending for the next call to find."""
from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest
from api_helpers import caught, lineno

tl = pytest.importorskip("torchlet")
from torchlet import _rt  # noqa: E402
from torchlet._C import ffi, lib  # noqa: E402
from torchlet._tensor import _wrap  # noqa: E402

UINT8_WHERE = "where received a uint8 condition tensor"
RESIZED = "An output with one or more elements was resized"


def recorded(fn):
    """(result, [(message, category, lineno)]) of fn(), every warning recorded"""
    r, ws = caught(fn)
    return r, [(m, c, ln) for m, c, _, ln in ws]


def nothing_left():
    """no warning pending on this thread, no parked result, no error"""
    assert lib.tl_has_warning() == 0
    p = lib.tl_pyabi_take_parked()
    assert p == ffi.NULL
    assert lib.tl_error_kind_get() == lib.TL_OK


def uint8(vals):
    return tl.tensor(vals, dtype=tl.uint8)


# ------------------------------------------------ hand-written callers of C

def test_wrap_takes_a_parked_result_of_a_wrapped_entry_point():
    # tl_ops_where_self is wrapped in the cffi module: it warns, so its result
    # is parked and NULL returned; _wrap must take it, not raise
    c, a, b = uint8([1, 0, 1]), tl.tensor([1.0, 2.0, 3.0]), tl.tensor([-1.0, -2.0, -3.0])
    h = lib.tl_ops_where_self(c._p, a._p, b._p)
    assert h == ffi.NULL and lib.tl_has_warning() == 1
    r, ws = recorded(lambda: (_wrap(h), lineno()))
    t, line = r
    np.testing.assert_array_equal(t.numpy(), [1.0, -2.0, 3.0])
    assert [(m[:len(UINT8_WHERE)], c, ln) for m, c, ln in ws] == [(UINT8_WHERE, UserWarning, line)]
    nothing_left()


def test_wrap_raises_what_an_unwrapped_entry_point_left_pending():
    # out= entries are not wrapped (the bindings call their _r shims): the
    # result comes back with the resize warning still pending
    a = tl.tensor([[1.0, 2.0, 3.0]])
    out = _rt.empty(5)
    r, ws = recorded(lambda: _wrap(lib.tl_ops_neg_out(a._p, out._p)))
    assert [m[:len(RESIZED)] for m, *_ in ws] == [RESIZED]
    assert tuple(out.shape) == (1, 3)
    np.testing.assert_array_equal(out.numpy(), -a.numpy())
    nothing_left()


def test_the_reverted_sequence_a_direct_call_after_a_resize_warning():
    """the order that broke test_arith (commit 222cadf): an out= resize by a
    direct call, then direct calls of wrapped entry points on meta tensors"""
    a = tl.tensor([[1.0, 2.0, 3.0]])
    out = _rt.empty(5)  # held: a temporary's ._p would be freed before the call
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _wrap(lib.tl_ops_neg_out(a._p, out._p))
    m = _rt.empty(4, 1, 3, device="meta")
    r = _wrap(lib.tl_ops_add_Tensor(m._p, m._p, _rt.scalar(1)))
    assert tuple(r.shape) == (4, 1, 3) and str(r.device) == "meta"
    nothing_left()


def test_warning_as_error_on_a_parked_result_releases_it():
    c, a = uint8([1, 0]), tl.ones(2)
    h = lib.tl_ops_where_self(c._p, a._p, a._p)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning, match=UINT8_WHERE):
            _wrap(h)
    nothing_left()


def test_rt_test_binary_add_shows_its_resize_warning():
    out = _rt.empty(1)
    _, ws = recorded(lambda: _rt.test_binary_add(tl.ones(3), tl.ones(3), out=out))
    assert [m[:len(RESIZED)] for m, *_ in ws] == [RESIZED]
    np.testing.assert_array_equal(out.numpy(), [2.0, 2.0, 2.0])
    nothing_left()


# -------------------------------------------- warnings before an error

def test_out_call_shows_the_warning_recorded_before_its_error():
    seen = []

    def show(message, category, filename, lineno, file=None, line=None):
        seen.append((str(message), sys.exc_info()[0]))  # no exception in flight yet

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = show
        with pytest.raises(RuntimeError, match="must match the size of tensor"):
            tl.where(uint8([1, 0, 1]), tl.ones(2), tl.zeros(2), out=tl.empty(2))
    assert [(m[:len(UINT8_WHERE)], e) for m, e in seen] == [(UINT8_WHERE, None)]
    nothing_left()
    _, ws = recorded(lambda: tl.ones(2) + 1)  # nothing surfaces at the next call
    assert ws == []


def test_functional_and_direct_calls_show_the_warning_before_the_error():
    c, a, b = uint8([1, 0, 1]), tl.ones(2), tl.zeros(2)  # held while C uses their ._p
    for call in (lambda: tl.where(c, a, b), lambda: _wrap(lib.tl_ops_where_self(c._p, a._p, b._p))):
        lib.tl_reset_warn_once()  # where's uint8 warning is once per process (TORCH_WARN_ONCE)
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            with pytest.raises(RuntimeError, match="must match the size of tensor"):
                call()
        assert [str(w.message)[:len(UINT8_WHERE)] for w in ws] == [UINT8_WHERE]
        nothing_left()


def test_error_filter_keeps_the_operators_error():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeError, match="must match the size of tensor"):
            tl.where(uint8([1, 0, 1]), tl.ones(2), tl.zeros(2), out=tl.empty(2))
    nothing_left()


# ------------------------------------------------------------- backward

def _where_graph():
    x = tl.ones(4, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the forward's own warning
        y = tl.where(uint8([1, 0, 1, 0]), x, tl.zeros(4)).sum()
    lib.tl_reset_warn_once()  # re-armed (once per process, TORCH_WARN_ONCE): backward's where warns again
    return x, y


@pytest.mark.parametrize("how", ["Tensor.backward", "Tensor.backward(gradient, inputs)", "autograd.backward",
                                 "autograd.grad"])
def test_backward_shows_warnings_recorded_by_backward_functions(how):
    # WhereBackward0 calls where(condition, grad, 0) with the saved uint8
    # condition: the kernel records its deprecation warning during backward
    x, y = _where_graph()
    if how == "Tensor.backward":
        r, ws = recorded(lambda: (y.backward(), lineno()))
    elif how == "Tensor.backward(gradient, inputs)":
        r, ws = recorded(lambda: (y.backward(tl.tensor(1.0), inputs=[x]), lineno()))
    elif how == "autograd.backward":
        r, ws = recorded(lambda: (tl.autograd.backward([y]), lineno()))
    else:
        r, ws = recorded(lambda: (tl.autograd.grad(y, x), lineno()))
    line = r[1]
    assert [(m[:len(UINT8_WHERE)], c, ln) for m, c, ln in ws] == [(UINT8_WHERE, UserWarning, line)]
    g = r[0][0] if how == "autograd.grad" else x.grad
    np.testing.assert_array_equal(g.numpy(), [1.0, 0.0, 1.0, 0.0])
    nothing_left()
    _, ws = recorded(lambda: tl.ones(2) + 1)
    assert ws == []


def test_backward_error_still_raises_and_leaves_nothing():
    x = tl.ones(2, requires_grad=True)
    y = (x * 2).sum()
    y.backward(retain_graph=False)
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()
    nothing_left()


# ------------------------------------------------------- library.call

def test_library_boxed_call_shows_the_kernels_warning():
    c = uint8([1, 0, 1])
    r, ws = recorded(lambda: (tl.library.call("aten::where.self", c, tl.ones(3), tl.zeros(3)), lineno()))
    t, line = r
    np.testing.assert_array_equal(t.numpy(), [1.0, 0.0, 1.0])
    assert [(m[:len(UINT8_WHERE)], ln) for m, _, ln in ws] == [(UINT8_WHERE, line)]
    nothing_left()
    lib.tl_reset_warn_once()  # where's uint8 warning is once per process (TORCH_WARN_ONCE)
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="must match the size of tensor"):
            tl.library.call("aten::where.self", c, tl.ones(2), tl.zeros(2))
    assert [str(w.message)[:len(UINT8_WHERE)] for w in ws] == [UINT8_WHERE]
    nothing_left()
