"""oneDNN as the float32 convolution accelerator (kernels/native/conv_dnnl.c,
kernels/native/dnnl_api.c, torchlet.backends.mkldnn; docs/NN.md
"Convolution").

Every product (forward, grad_input, grad_weight) with oneDNN on against the
im2col path (oneDNN off) and a float64 numpy-free reference (the im2col path
in float64) on random data: conv1d/2d/3d, groups, stride, dilation,
asymmetric padding, bias, transposed convolutions with output_padding,
non-contiguous inputs, batch 1; torch's float32 convolution where installed.
The switches (TORCHLET_ONEDNN=0, `enabled`, flags()), a missing library
(TORCHLET_LIBDNNL pointing nowhere: conv still runs, nothing warns) and the
primitive cache (a loop creates each primitive once)."""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import torchlet as tl
import torchlet.nn.functional as F

mk = tl.backends.mkldnn
needs_dnnl = pytest.mark.skipif(not mk.is_available(), reason="oneDNN not installed")
R = np.random.default_rng(4242)

# float32 products over a few hundred terms: PyTorch's float32 conv tolerance
RTOL, ATOL = 1e-4, 2e-4


def t(a, grad=False):
    x = tl.from_numpy(np.ascontiguousarray(a))
    return x.requires_grad_() if grad else x


# (nd, N, Cin, Cout, size, kernel, stride, padding, dilation, groups, bias)
CONV_CASES = [
    (2, 2, 3, 5, 9, 3, 1, 1, 1, 1, True),
    (2, 3, 8, 16, 12, 3, 2, 1, 1, 1, False),
    (2, 1, 6, 4, 11, (3, 2), (2, 1), (1, 0), (2, 1), 2, True),
    (2, 2, 8, 8, 7, 1, 1, 0, 1, 1, True),
    (2, 2, 8, 8, 10, 3, 1, 1, 1, 8, False),      # depthwise
    (2, 2, 4, 6, 8, 2, 2, 0, 1, 1, True),        # odd remainder of the stride
    (1, 2, 4, 6, 17, 5, 2, 2, 1, 2, True),
    (3, 2, 3, 4, 6, 3, 1, 1, 1, 1, True),
    (2, 1, 3, 4, 9, 3, 1, 1, 1, 1, True),        # small: PyTorch's rule keeps it off oneDNN
]


def conv(nd, x, w, b, s, p, d, g):
    fn = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[nd]
    return fn(x, w, b, stride=s, padding=p, dilation=d, groups=g)


def run_case(case, dtype=np.float32, enabled=True):
    nd, N, C, OC, size, k, s, p, d, g, bias = case
    ks = k if isinstance(k, tuple) else (k,) * nd
    rng = np.random.default_rng(7)
    x = rng.standard_normal((N, C) + (size,) * nd).astype(dtype)
    w = rng.standard_normal((OC, C // g) + ks).astype(dtype)
    b = rng.standard_normal(OC).astype(dtype) if bias else None
    tx, tw = t(x, True), t(w, True)
    tb = t(b, True) if bias else None
    with mk.flags(enabled=enabled):
        y = conv(nd, tx, tw, tb, s, p, d, g)
        go = np.random.default_rng(8).standard_normal(tuple(y.shape)).astype(dtype)
        y.backward(t(go))
    out = [y.detach().numpy(), tx.grad.numpy(), tw.grad.numpy()]
    return out + ([tb.grad.numpy()] if bias else [])


@needs_dnnl
@pytest.mark.parametrize("case", CONV_CASES, ids=lambda c: f"{c[0]}d-" + "-".join(map(str, c[1:])))
def test_products_match_float64(case):
    ref = run_case(case, np.float64, enabled=False)
    got = run_case(case, np.float32, enabled=True)
    for r, a in zip(ref, got):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, r, rtol=RTOL, atol=ATOL * max(1.0, float(np.abs(r).max())))


# (nd, N, Cin, Cout, size, kernel, stride, padding, output_padding, dilation, groups)
TRANSPOSED = [
    (2, 2, 6, 4, 5, 3, 2, 1, 1, 1, 2),
    (2, 2, 4, 4, 6, 2, 2, 0, 0, 1, 1),
    (3, 2, 2, 3, 4, 3, 1, 0, 0, 1, 1),
    (1, 2, 3, 5, 9, 3, 3, 0, 2, 1, 1),
    (2, 2, 4, 6, 5, 3, 1, 2, 0, 2, 1),
    (2, 2, 4, 6, 7, 3, 1, 1, 1, 2, 1),           # output_padding >= stride (dilated): zero right padding
    (2, 2, 4, 6, 7, 3, 1, 0, 1, 2, 1),           # ... negative: left to im2col, without a warning
]


@needs_dnnl
@pytest.mark.parametrize("case", TRANSPOSED, ids=lambda c: "-".join(map(str, c)))
def test_conv_transpose_matches_im2col(case):
    nd, N, C, OC, size, k, s, p, op, d, g = case
    x = R.standard_normal((N, C) + (size,) * nd)
    w = R.standard_normal((C, OC // g) + (k,) * nd)
    b = R.standard_normal(OC)
    fn = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}[nd]

    def go(dtype, enabled):
        tx, tw, tb = (t(a.astype(dtype), True) for a in (x, w, b))
        with mk.flags(enabled=enabled):
            y = fn(tx, tw, tb, stride=s, padding=p, output_padding=op, groups=g, dilation=d)
            y.backward(t(np.ones(tuple(y.shape), dtype)))
        return [y.detach().numpy(), tx.grad.numpy(), tw.grad.numpy(), tb.grad.numpy()]

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = go(np.float32, True)
    for r, a in zip(go(np.float64, False), got):
        np.testing.assert_allclose(a, r, rtol=RTOL, atol=ATOL * max(1.0, float(np.abs(r).max())))


@needs_dnnl
def test_non_contiguous_and_unbatched():
    x = R.standard_normal((3, 10, 9, 2)).astype(np.float32)
    w = R.standard_normal((4, 3, 3, 3)).astype(np.float32)
    tx = t(x).permute(3, 0, 1, 2)   # [2, 3, 10, 9], non-contiguous
    tw = t(w).transpose(2, 3)
    with mk.flags(enabled=True):
        a = F.conv2d(tx, tw, padding=1).numpy()
        u = F.conv2d(tx[0], tw, padding=1).numpy()
    with mk.flags(enabled=False):
        r = F.conv2d(tx, tw, padding=1).numpy()
    np.testing.assert_allclose(a, r, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(u, r[0], rtol=RTOL, atol=ATOL)


@needs_dnnl
def test_against_torch():
    torch = pytest.importorskip("torch")
    x = R.standard_normal((2, 16, 14, 13)).astype(np.float32)
    w = R.standard_normal((8, 16, 3, 3)).astype(np.float32) / 12
    b = R.standard_normal(8).astype(np.float32)
    g = R.standard_normal((2, 8, 7, 7)).astype(np.float32)
    tx, tw, tb = t(x, True), t(w, True), t(b, True)
    with mk.flags(enabled=True):
        F.conv2d(tx, tw, tb, stride=2, padding=1).backward(t(g))
        y = F.conv2d(tx, tw, tb, stride=2, padding=1).detach().numpy()
    px, pw, pb = (torch.from_numpy(a).requires_grad_() for a in (x, w, b))
    py = torch.nn.functional.conv2d(px, pw, pb, stride=2, padding=1)
    py.backward(torch.from_numpy(g))
    for a, r in ((y, py.detach()), (tx.grad.numpy(), px.grad), (tw.grad.numpy(), pw.grad), (tb.grad.numpy(), pb.grad)):
        np.testing.assert_allclose(a, r.numpy(), rtol=RTOL, atol=ATOL * max(1.0, float(r.abs().max())))


@needs_dnnl
def test_float64_and_half_unchanged_by_the_switch():
    """oneDNN takes float32 only: float64 results are bit-identical either way"""
    x, w = R.standard_normal((2, 3, 8, 8)), R.standard_normal((4, 3, 3, 3))
    with mk.flags(enabled=True):
        a = F.conv2d(t(x), t(w), padding=1).numpy()
    with mk.flags(enabled=False):
        r = F.conv2d(t(x), t(w), padding=1).numpy()
    np.testing.assert_array_equal(a, r)


@needs_dnnl
def test_primitive_cache_reused():
    x = t(R.standard_normal((2, 5, 11, 11)).astype(np.float32), True)
    w = t(R.standard_normal((7, 5, 3, 3)).astype(np.float32), True)
    with mk.flags(enabled=True):
        F.conv2d(x, w, padding=1).sum().backward()
        n = mk._cache_size()
        for _ in range(3):
            F.conv2d(x, w, padding=1).sum().backward()
    assert n >= 3 and mk._cache_size() == n


def test_flags_and_enabled_restore():
    before = mk.enabled
    with mk.flags(enabled=False):
        assert mk.enabled is False
    assert mk.enabled == before
    mk.enabled = False
    assert mk.set_flags(True) == (False, False)
    mk.enabled = before


def _python(code, **env):
    e = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True, timeout=120)


CHILD = """
import warnings, numpy as np, torchlet as tl, torchlet.nn.functional as F
warnings.simplefilter("error")
x = tl.from_numpy(np.ones((2, 2, 5, 5), np.float32)).requires_grad_()
w = tl.from_numpy(np.ones((3, 2, 3, 3), np.float32)).requires_grad_()
y = F.conv2d(x, w, padding=1)
y.sum().backward()
m = tl.backends.mkldnn
print(m.enabled, m.is_available(), m._cache_size(), float(y.sum()), float(w.grad.sum()), repr(m.unavailable_reason()))
"""


def test_env_var_disables():
    r = _python(CHILD, TORCHLET_ONEDNN="0")
    assert r.returncode == 0, r.stderr
    enabled, _, cached, ys, gs, _ = r.stdout.split(maxsplit=5)
    assert (enabled, cached, ys, gs) == ("False", "0", "2028.0", "2028.0")


@needs_dnnl
def test_child_uses_onednn_by_default():
    r = _python(CHILD, TORCHLET_ONEDNN="1")
    assert r.returncode == 0, r.stderr
    enabled, avail, cached, ys, gs, reason = r.stdout.split(maxsplit=5)
    assert (enabled, avail, ys, gs, reason.strip()) == ("True", "True", "2028.0", "2028.0", "''")
    assert int(cached) >= 3   # forward, backward data, backward weights


@needs_dnnl
def test_small_problems_stay_native():
    """PyTorch's rule: one image, one group, a 3x3 window, a small input: no primitive made"""
    x = t(R.standard_normal((1, 4, 9, 9)).astype(np.float32), True)
    w = t(R.standard_normal((4, 4, 3, 3)).astype(np.float32), True)
    with mk.flags(enabled=True):
        n = mk._cache_size()
        F.conv2d(x, w, padding=1).sum().backward()
        assert mk._cache_size() == n
        F.conv2d(x.expand(2, 4, 9, 9), w, padding=1).sum().backward()
        assert mk._cache_size() > n


def test_missing_library_falls_back_quietly():
    r = _python(CHILD, TORCHLET_LIBDNNL="/nonexistent/libdnnl.so.3", TORCHLET_ONEDNN="1")
    assert r.returncode == 0, r.stderr
    enabled, avail, cached, ys, gs, reason = r.stdout.split(maxsplit=5)
    assert (enabled, avail, cached, ys, gs) == ("True", "False", "0", "2028.0", "2028.0")
    assert "oneDNN could not be loaded" in reason


def test_library_without_the_api_falls_back():
    """a library that loads but is not oneDNN (libm): unavailable, with the missing entry point named"""
    r = _python(CHILD, TORCHLET_LIBDNNL="libm.so.6", TORCHLET_ONEDNN="1")
    assert r.returncode == 0, r.stderr
    assert "False 0 2028.0 2028.0" in r.stdout and "lacks dnnl_engine_create" in r.stdout


@needs_dnnl
def test_no_warning_on_the_common_path():
    x = t(R.standard_normal((2, 4, 6, 6)).astype(np.float32))
    w = t(R.standard_normal((4, 4, 3, 3)).astype(np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with mk.flags(enabled=True):
            F.conv2d(x, w, padding=1)


@needs_dnnl
def test_pointwise_stays_on_gemm():
    """a 1x1 window, stride 1, no padding runs the GEMM path (no primitive made); strided, it goes to oneDNN"""
    x = t(R.standard_normal((2, 6, 9, 9)).astype(np.float32), True)
    w = t(R.standard_normal((5, 6, 1, 1)).astype(np.float32), True)
    with mk.flags(enabled=True):
        n = mk._cache_size()
        F.conv2d(x, w).sum().backward()
        assert mk._cache_size() == n
        F.conv2d(x, w, stride=2).sum().backward()
        assert mk._cache_size() > n


@needs_dnnl
def test_threads_share_primitives():
    """Python threads convolving at once (the GIL is released in the kernels) share cached primitives"""
    import threading
    x = R.standard_normal((2, 8, 12, 12)).astype(np.float32)
    w = R.standard_normal((8, 8, 3, 3)).astype(np.float32)
    with mk.flags(enabled=False):
        ref = F.conv2d(t(x), t(w), padding=1).numpy()
    out, errs = [], []

    def work():
        try:
            for _ in range(5):
                out.append(F.conv2d(t(x), t(w), padding=1).numpy())
        except Exception as e:  # pragma: no cover - reported below
            errs.append(e)

    with mk.flags(enabled=True):
        ths = [threading.Thread(target=work) for _ in range(4)]
        for th in ths:
            th.start()
        for th in ths:
            th.join()
    assert not errs and len(out) == 20
    for o in out:
        np.testing.assert_allclose(o, ref, rtol=RTOL, atol=ATOL * float(np.abs(ref).max()))


@needs_dnnl
def test_one_thread_is_one_thread():
    """torchlet.set_num_threads(1): oneDNN's OpenMP starts no thread of its own"""
    code = """
import os, numpy as np, torchlet as tl, torchlet.nn.functional as F
tl.set_num_threads(1)
x = tl.from_numpy(np.ones((8, 16, 20, 20), np.float32)).requires_grad_()
w = tl.from_numpy(np.ones((16, 16, 3, 3), np.float32)).requires_grad_()
n0 = len(os.listdir('/proc/self/task'))
F.conv2d(x, w, padding=1).sum().backward()
print(n0, len(os.listdir('/proc/self/task')), tl.backends.mkldnn._cache_size())
"""
    r = _python(code, TORCHLET_ONEDNN="1", OMP_NUM_THREADS="4")
    assert r.returncode == 0, r.stderr
    before, after, cached = map(int, r.stdout.split())
    assert cached >= 3 and after == before
