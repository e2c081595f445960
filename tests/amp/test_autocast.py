"""torchlet.autocast end to end: dtypes per policy, eligibility, nesting,
autograd through the casts, the cast cache, threads, the Python API.
Compared with PyTorch 2.13 where it is installed."""
from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

import torchlet as tl

CPU_WARNING = ("In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
               "CPU Autocast only supports dtypes of torch.bfloat16, torch.float16 currently.")


def rnd(*shape, dtype=tl.float32, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return tl.tensor(a).to(dtype)


def torch_or_skip():
    return pytest.importorskip("torch")


# ------------------------------------------------------------------ keys / state

def test_dispatch_keys_match_pytorch():
    assert str(tl._C._dispatch_keys(tl.ones(2))) == "DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)"
    assert str(tl._C._dispatch_keys(tl.ones(2, dtype=tl.int64))) == \
        "DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)"
    assert str(tl._C._dispatch_keys(tl.ones(2, device="meta"))) == "DispatchKeySet(Meta, ADInplaceOrView, AutogradMeta)"
    torch = pytest.importorskip("torch")
    assert str(tl._C._dispatch_keys(tl.ones(2))) == str(torch._C._dispatch_keys(torch.ones(2)))
    assert str(tl._C._dispatch_keys(tl.ones(2, device="meta"))) == \
        str(torch._C._dispatch_keys(torch.ones(2, device="meta")))


def test_autocast_keys_excluded_by_default():
    ex = tl._C._dispatch_tls_local_exclude_set()
    assert "AutocastCPU" in str(ex) and "AutocastCUDA" in str(ex)
    with tl.autocast("cpu"):
        ex = str(tl._C._dispatch_tls_local_exclude_set())
        assert "AutocastCPU" not in ex and "AutocastCUDA" in ex
    assert "AutocastCPU" in str(tl._C._dispatch_tls_local_exclude_set())


def test_state_functions():
    assert tl.get_autocast_dtype("cpu") is tl.bfloat16
    assert tl.get_autocast_dtype("cuda") is tl.float16
    assert not tl.is_autocast_enabled("cpu") and not tl.is_autocast_enabled()
    assert tl.is_autocast_cache_enabled()
    with tl.autocast("cpu"):
        assert tl.is_autocast_enabled("cpu")
        assert not tl.is_autocast_enabled()  # no argument: cuda, as in PyTorch
    tl.set_autocast_enabled("cpu", True)
    try:
        assert tl.is_autocast_enabled("cpu")
    finally:
        tl.set_autocast_enabled("cpu", False)
    tl.set_autocast_dtype("cpu", tl.float16)
    try:
        assert tl.get_autocast_dtype("cpu") is tl.float16
    finally:
        tl.set_autocast_dtype("cpu", tl.bfloat16)
    assert tl.autocast_increment_nesting() == 1
    assert tl.autocast_decrement_nesting() == 0
    tl.set_autocast_cache_enabled(False)
    assert not tl.is_autocast_cache_enabled()
    tl.set_autocast_cache_enabled(True)
    assert tl.amp.autocast is tl.autocast


def test_bad_arguments():
    with pytest.raises(ValueError, match=r"Expected `device_type` of type `str`, got: `<class 'int'>`"):
        tl.autocast(3)
    with pytest.raises(RuntimeError, match="device type at start of device string: foo"):
        tl.autocast("foo")
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'meta'"):
        tl.autocast("meta")
    with pytest.raises(RuntimeError, match="device string: foo"):
        tl.get_autocast_dtype("foo")
    with pytest.raises(TypeError):
        tl.set_autocast_enabled("cpu", "yes")


def test_cpu_unsupported_dtype_warns_and_disables():
    with pytest.warns(UserWarning) as rec:
        ctx = tl.autocast("cpu", dtype=tl.float32)
    assert str(rec[0].message) == CPU_WARNING
    with ctx:
        assert not tl.is_autocast_enabled("cpu")
        assert tl.mm(rnd(2, 3), rnd(3, 2)).dtype is tl.float32
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        torch.autocast("cpu", dtype=torch.float32)
    assert str(w[0].message) == CPU_WARNING


def test_cuda_without_a_backend_disables_with_pytorchs_warning():
    with pytest.warns(UserWarning, match="CUDA is not available or torch_xla is imported. Disabling autocast."):
        with tl.autocast("cuda"):
            assert not tl.is_autocast_enabled("cuda")


# ------------------------------------------------------------------ policies

def test_lower_precision_ops_run_in_bf16():
    a, b = rnd(4, 5), rnd(5, 3, seed=1)
    bias = rnd(3, seed=2)
    with tl.autocast("cpu"):
        assert tl.mm(a, b).dtype is tl.bfloat16
        assert tl.matmul(a, b).dtype is tl.bfloat16
        assert (a @ b).dtype is tl.bfloat16
        assert tl.nn.functional.linear(a, b.t(), bias).dtype is tl.bfloat16
        assert tl.addmm(bias, a, b).dtype is tl.bfloat16
        assert tl.bmm(a[None], b[None]).dtype is tl.bfloat16
        assert tl.baddbmm(bias[None, None], a[None], b[None]).dtype is tl.bfloat16
    assert tl.mm(a, b).dtype is tl.float32


def test_float16_autocast_dtype():
    with tl.autocast("cpu", dtype=tl.float16):
        assert tl.mm(rnd(2, 3), rnd(3, 2)).dtype is tl.float16


def test_unlisted_and_fp32_and_promote_ops():
    a = rnd(3, 4)
    with tl.autocast("cpu"):
        assert (a + a).dtype is tl.float32
        assert tl.relu(a).dtype is tl.float32
        assert (a.to(tl.bfloat16) + a).dtype is tl.float32
        h = a.to(tl.bfloat16)
        assert tl.nn.functional.mse_loss(h, h).dtype is tl.float32
        assert tl.prod(h).dtype is tl.float32
        assert tl.cat([h, a]).dtype is tl.float32
        assert tl.stack([h, a]).dtype is tl.float32
        assert tl.cat([h, h]).dtype is tl.bfloat16
        assert tl.cat([h, a.to(tl.float64)]).dtype is tl.float64  # doubles are ignored by promote
        assert tl.softmax(h, 0).dtype is tl.bfloat16  # not listed on cpu
        with pytest.raises(RuntimeError, match="Unexpected floating ScalarType in at::autocast::prioritize"):
            tl.cat([h, a.to(tl.float16)])


def test_doubles_and_integers_untouched():
    a = rnd(2, 3)
    with tl.autocast("cpu"):
        assert tl.mm(a.to(tl.float64), a.to(tl.float64).t()).dtype is tl.float64
        i = tl.ones(2, 3, dtype=tl.int64)
        assert tl.mm(i, i.t()).dtype is tl.int64


def test_inplace_and_out_untouched():
    a, b = rnd(2, 3), rnd(3, 2, seed=1)
    out = tl.empty(2, 2)
    c = tl.zeros(2, 2)
    with tl.autocast("cpu"):
        tl.mm(a, b, out=out)
        c.addmm_(a, b)
    assert out.dtype is tl.float32 and c.dtype is tl.float32
    np.testing.assert_allclose(out.numpy(), (a @ b).numpy(), rtol=1e-6)


def test_nested_enabled_false_and_restore():
    a = rnd(2, 3)
    with tl.autocast("cpu"):
        with tl.autocast("cpu", enabled=False):
            assert not tl.is_autocast_enabled("cpu")
            assert tl.mm(a, a.t()).dtype is tl.float32
        assert tl.is_autocast_enabled("cpu")
        assert tl.mm(a, a.t()).dtype is tl.bfloat16
        with tl.autocast("cpu", dtype=tl.float16):
            assert tl.mm(a, a.t()).dtype is tl.float16
        assert tl.get_autocast_dtype("cpu") is tl.bfloat16
    assert not tl.is_autocast_enabled("cpu")


def test_decorator():
    @tl.autocast("cpu")
    def f(x):
        """doc"""
        return tl.mm(x, x.t())

    assert f.__name__ == "f" and f.__doc__ == "doc"
    assert f(rnd(2, 3)).dtype is tl.bfloat16
    assert not tl.is_autocast_enabled("cpu")


def test_results_match_pytorch():
    torch = torch_or_skip()
    rng = np.random.default_rng(3)
    x, w, bias = (rng.standard_normal(s).astype(np.float32) for s in [(7, 33), (17, 33), (17,)])
    with tl.autocast("cpu"):
        ours = tl.nn.functional.linear(tl.tensor(x), tl.tensor(w), tl.tensor(bias))
        cat = tl.cat([tl.tensor(x).to(tl.bfloat16), tl.tensor(x)])
    with torch.autocast("cpu"):
        ref = torch.nn.functional.linear(torch.tensor(x), torch.tensor(w), torch.tensor(bias))
        rcat = torch.cat([torch.tensor(x).bfloat16(), torch.tensor(x)])
    assert str(ours.dtype).split(".")[1] == str(ref.dtype).split(".")[1]
    assert str(cat.dtype).split(".")[1] == str(rcat.dtype).split(".")[1]
    np.testing.assert_allclose(ours.to(tl.float32).numpy(), ref.float().numpy(), rtol=2e-2, atol=2e-2)


# ------------------------------------------------------------------ autograd

def test_grads_are_float32_through_to_copy():
    w = rnd(4, 3).requires_grad_()
    x = rnd(2, 3, seed=1)
    with tl.autocast("cpu"):
        y = tl.nn.functional.linear(x, w)
        assert y.dtype is tl.bfloat16
    y.to(tl.float32).sum().backward()
    assert w.grad.dtype is tl.float32
    np.testing.assert_allclose(w.grad.numpy(), np.tile(x.sum(0).numpy(), (4, 1)), rtol=2e-2, atol=2e-2)


def _logged(fn) -> list:
    """str(func) of every operator a dispatch mode sees while fn runs."""
    from torchlet.utils._python_dispatch import TorchDispatchMode
    seen = []

    class Log(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    with Log():
        fn()
    return seen


def test_dispatch_mode_sees_to_copy_before_mm():
    a, b = rnd(2, 3), rnd(3, 2)
    with tl.autocast("cpu"):
        seen = _logged(lambda: tl.mm(a, b))
    assert seen.index("aten._to_copy.default") < seen.index("aten.mm.default")


# ------------------------------------------------------------------ cast cache

def test_cache_casts_a_weight_once_and_clears_at_exit():
    w = rnd(4, 3).requires_grad_()
    x = rnd(2, 3, seed=1)
    with tl.autocast("cpu"):
        tl.nn.functional.linear(x, w)
        assert tl._C.lib.tl_autocast_cache_size() == 1
        tl.nn.functional.linear(x, w)
        assert tl._C.lib.tl_autocast_cache_size() == 1
        tl.mm(x, x.t())  # activations (no grad) are not cached
        assert tl._C.lib.tl_autocast_cache_size() == 1
        with tl.autocast("cpu"):  # leaving an inner region keeps the cache
            pass
        assert tl._C.lib.tl_autocast_cache_size() == 1
    assert tl._C.lib.tl_autocast_cache_size() == 0


def _count_to_copy(fn):
    return _logged(fn).count("aten._to_copy.default")


def casts():
    return tl._C.lib.tl_autocast_cast_count()


def test_cache_counts_casts():
    w = rnd(4, 3).requires_grad_()
    x = rnd(2, 3, seed=1)
    with tl.autocast("cpu"):
        n0 = casts()
        tl.nn.functional.linear(x, w)
        assert casts() - n0 == 2  # the activation and the weight
        tl.nn.functional.linear(x, w)
        assert casts() - n0 == 3  # the activation only: the weight is cached
        with tl.no_grad():
            w.add_(1.0)
        tl.nn.functional.linear(x, w)
        assert casts() - n0 == 5  # the weight again: its version moved
    with tl.autocast("cpu", cache_enabled=False):
        n0 = casts()
        tl.nn.functional.linear(x, w)
        tl.nn.functional.linear(x, w)
        assert casts() - n0 == 4


def test_cache_hit_reuses_the_cast():
    w = rnd(4, 3).requires_grad_()
    x = rnd(2, 3, seed=1)
    with tl.autocast("cpu"):
        first = tl.nn.functional.linear(x, w)
        n = _count_to_copy(lambda: tl.nn.functional.linear(x, w))
    assert n == 1  # the activation only; the weight came from the cache
    with tl.autocast("cpu", cache_enabled=False):
        assert _count_to_copy(lambda: tl.nn.functional.linear(x, w)) == 2
        assert tl._C.lib.tl_autocast_cache_size() == 0
    del first


@pytest.mark.parametrize("update", ["add_", "data", "copy_"])
def test_cache_recasts_after_inplace_update(update):
    # PyTorch's cache returns the stale cast here (pytorch#48049)
    w = rnd(4, 3).requires_grad_()
    x = rnd(2, 3, seed=1)
    with tl.autocast("cpu"):
        before = tl.nn.functional.linear(x, w)
        with tl.no_grad():
            if update == "add_":
                w.add_(1.0)
            elif update == "data":
                w.data.mul_(2.0)
            else:
                w.copy_(w * 3.0)
        after = tl.nn.functional.linear(x, w)
        assert tl._C.lib.tl_autocast_cache_size() == 1
    want = tl.nn.functional.linear(x, w.detach())
    np.testing.assert_allclose(after.to(tl.float32).numpy(), want.numpy(), rtol=3e-2, atol=3e-2)
    assert not np.allclose(after.to(tl.float32).numpy(), before.to(tl.float32).numpy(), rtol=1e-2, atol=1e-2)


def test_views_and_non_leaves_not_cached():
    w = rnd(4, 3).requires_grad_()
    x = rnd(2, 3, seed=1)
    with tl.autocast("cpu"):
        tl.nn.functional.linear(x, w * 2)  # not a leaf
        tl.mm(x, w.t())  # a view
        assert tl._C.lib.tl_autocast_cache_size() == 0


# ------------------------------------------------------------------ threads

def test_autocast_is_per_thread():
    a = rnd(2, 3)
    seen = {}
    go, done = threading.Event(), threading.Event()

    def other():
        go.wait()
        seen["enabled"] = tl.is_autocast_enabled("cpu")
        seen["dtype"] = tl.mm(a, a.t()).dtype
        done.set()

    t = threading.Thread(target=other)
    t.start()
    with tl.autocast("cpu"):
        go.set()
        done.wait(30)
        assert tl.mm(a, a.t()).dtype is tl.bfloat16
    t.join()
    assert seen == {"enabled": False, "dtype": tl.float32}


def test_threads_share_the_cache_safely():
    w = rnd(8, 8).requires_grad_()
    errors = []

    def work():
        try:
            with tl.autocast("cpu"):
                for _ in range(50):
                    assert tl.nn.functional.linear(rnd(2, 8), w).dtype is tl.bfloat16
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    ts = [threading.Thread(target=work) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors
