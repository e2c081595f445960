"""Fractional max pooling: fractional_max_pool2d/3d (+ backward),
F.fractional_max_pool2d/3d, nn.FractionalMaxPool2d/3d. Against a numpy
reference of PyTorch's interval formula always, against torch where
installed with the same `_random_samples` (values, indices, gradients,
messages, module reprs), float64 gradients and second derivatives by finite
differences."""
import sys
from pathlib import Path

import numpy as np
import pytest

import torchlet
import torchlet.nn as nn
import torchlet.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "autograd"))
from _same_error import assert_same_error  # noqa: E402
from _gradcheck_util import gradcheck, gradgradcheck  # noqa: E402

R = np.random.default_rng(20261207)


def _torch():
    return pytest.importorskip("torch")


def _n(t):
    return np.asarray(t.numpy())


def np_intervals(u, n_in, n_out, pool, ftype):
    seq = np.zeros(n_out, dtype=np.int64)
    if n_out > 1:
        alpha = ftype(ftype(n_in - pool) / ftype(n_out - 1))
        u = ftype(u)
        for i in range(n_out - 1):
            seq[i] = int(ftype((ftype(i) + u) * alpha)) - int(ftype(u * alpha))
    if n_out > 0:
        seq[n_out - 1] = n_in - pool
    return seq


def np_fmp(x, k, out, u):
    """x [N, C, *s] (2 or 3 spatial dims), u [N, C, nd]: (values, flat indices)"""
    nd = len(k)
    N, C = x.shape[:2]
    s = x.shape[2:]
    vals = np.zeros((N, C, *out), x.dtype)
    inds = np.zeros((N, C, *out), np.int64)
    ftype = np.float64 if x.dtype == np.float64 else np.float32
    for n in range(N):
        for c in range(C):
            # 2-d samples are (W, H); 3-d (T, H, W)
            order = [1, 0] if nd == 2 else [0, 1, 2]
            starts = [np_intervals(u[n, c, order[i]], s[i], out[i], k[i], ftype) for i in range(nd)]
            for o in np.ndindex(*out):
                sl = tuple(slice(starts[i][o[i]], starts[i][o[i]] + k[i]) for i in range(nd))
                win = x[(n, c) + sl]
                flat = np.ravel_multi_index(tuple(np.indices(win.shape).reshape(nd, -1)
                                                  + np.array([starts[i][o[i]] for i in range(nd)])[:, None]), s)
                wv = win.reshape(-1)
                j = int(np.argmax(wv))  # first of equal values (no NaN in these inputs)
                vals[(n, c) + o] = wv[j]
                inds[(n, c) + o] = flat[j]
    return vals, inds


CASES = [  # shape, kernel, output
    ((2, 3, 9, 11), (2, 3), (4, 5)),
    ((1, 2, 7, 7), (3, 3), (5, 5)),
    ((2, 2, 8, 6), (2, 2), (1, 5)),
    ((1, 2, 6, 7, 8), (2, 2, 3), (3, 4, 5)),
    ((2, 1, 5, 6, 5), (2, 2, 2), (3, 4, 1)),
]


@pytest.mark.parametrize("shape, k, out", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fmp_numpy(shape, k, out, dtype):
    nd = len(k)
    x = R.standard_normal(shape).astype(dtype)
    u = R.random((shape[0], shape[1], nd)).astype(dtype)
    fn = F.fractional_max_pool2d if nd == 2 else F.fractional_max_pool3d
    v, i = fn(torchlet.tensor(x), k, out, return_indices=True, _random_samples=torchlet.tensor(u))
    wv, wi = np_fmp(x, k, out, u)
    np.testing.assert_array_equal(_n(i), wi)
    np.testing.assert_array_equal(_n(v), wv)
    # unbatched input: the first batch of samples
    v1 = fn(torchlet.tensor(x[0]), k, out, _random_samples=torchlet.tensor(u))
    np.testing.assert_array_equal(_n(v1), wv[0])


@pytest.mark.parametrize("shape, k, out", CASES)
def test_fmp_gradcheck(shape, k, out):
    nd = len(k)
    x = R.standard_normal(shape)
    u = torchlet.tensor(R.random((shape[0], shape[1], nd)))
    fn = F.fractional_max_pool2d if nd == 2 else F.fractional_max_pool3d
    assert gradcheck(lambda t: fn(t, k, out, _random_samples=u), [x])


def test_fmp_gradgradcheck():
    u2 = torchlet.tensor(R.random((1, 2, 2)))
    assert gradgradcheck(lambda t: F.fractional_max_pool2d(t * t, 2, (3, 4), _random_samples=u2),
                         [R.standard_normal((1, 2, 6, 7))])
    u3 = torchlet.tensor(R.random((1, 2, 3)))
    assert gradgradcheck(lambda t: F.fractional_max_pool3d(t * t, 2, (2, 3, 2), _random_samples=u3),
                         [R.standard_normal((1, 2, 4, 5, 4))])


@pytest.mark.parametrize("shape, k, out", CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_fmp_against_torch(shape, k, out, dtype):
    torch = _torch()
    nd = len(k)
    x = R.standard_normal(shape)
    u = R.random((shape[0], shape[1], nd))
    td, ld = getattr(torch, dtype), getattr(torchlet, dtype)
    tx = torch.tensor(x).to(td).requires_grad_()
    lx = torchlet.tensor(x).to(ld).detach().requires_grad_()
    name = f"fractional_max_pool{nd}d"
    tv, ti = getattr(torch.nn.functional, name)(tx, k, out, return_indices=True,
                                               _random_samples=torch.tensor(u).to(td))
    lv, li = getattr(F, name)(lx, k, out, return_indices=True, _random_samples=torchlet.tensor(u).to(ld))
    np.testing.assert_array_equal(_n(li), ti.numpy())
    np.testing.assert_array_equal(_n(lv.double()), tv.detach().double().numpy())
    assert type(lv.grad_fn).__name__ == type(tv.grad_fn).__name__
    g = R.standard_normal(tuple(tv.shape))
    tv.backward(torch.tensor(g).to(td))
    lv.backward(torchlet.tensor(g).to(ld))
    np.testing.assert_array_equal(_n(lx.grad.double()), tx.grad.double().numpy())


def test_fmp_half_intervals_round_like_torch():
    # float16 interval arithmetic rounds at every step (c10::Half): large sizes show it
    torch = _torch()
    for seed in range(4):
        r = np.random.default_rng(seed)
        x = r.standard_normal((1, 8, 300, 301))
        u = r.random((1, 8, 2))
        ti = torch.nn.functional.fractional_max_pool2d(torch.tensor(x).half(), 2, (133, 211), return_indices=True,
                                                       _random_samples=torch.tensor(u).half())[1]
        li = F.fractional_max_pool2d(torchlet.tensor(x).half(), 2, (133, 211), return_indices=True,
                                     _random_samples=torchlet.tensor(u).half())[1]
        np.testing.assert_array_equal(_n(li), ti.numpy())


def test_fmp_output_ratio_and_random_samples():
    x = torchlet.randn(2, 3, 10, 12)
    y = F.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.75))
    assert tuple(y.shape) == (2, 3, 5, 9)
    y3 = F.fractional_max_pool3d(torchlet.randn(3, 6, 7, 8), 2, output_ratio=0.5)
    assert tuple(y3.shape) == (3, 3, 3, 4)
    # the windows lie inside the input, whatever the drawn samples
    v, i = F.fractional_max_pool2d(x, 3, (4, 5), return_indices=True)
    assert int(i.min().item()) >= 0 and int(i.max().item()) < 120
    np.testing.assert_array_equal(_n(v), np.take_along_axis(_n(x).reshape(2, 3, -1), _n(i).reshape(2, 3, -1),
                                                            -1).reshape(2, 3, 4, 5))


ERRORS = [
    lambda m, x: m.nn.functional.fractional_max_pool2d(x, 2),
    lambda m, x: m.nn.functional.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5, 0.5)),
    lambda m, x: m.nn.functional.fractional_max_pool2d(x, 2, output_ratio=0.5),
    lambda m, x: m.nn.functional.fractional_max_pool3d(x, 2),
    lambda m, x: m._C._nn.fractional_max_pool2d(x, [2], [2, 2], m.rand(2, 3, 2)),
    lambda m, x: m._C._nn.fractional_max_pool2d(x, [2, 2], [2], m.rand(2, 3, 2)),
    lambda m, x: m._C._nn.fractional_max_pool2d(x[0, 0], [2, 2], [2, 2], m.rand(2, 3, 2)),
    lambda m, x: m._C._nn.fractional_max_pool2d(x[:, :0], [2, 2], [2, 2], m.rand(2, 3, 2)),
    lambda m, x: m._C._nn.fractional_max_pool2d(x, [2, 2], [5, 2], m.rand(2, 3, 2)),
    lambda m, x: m._C._nn.fractional_max_pool2d(x, [2, 2], [2, 6], m.rand(2, 3, 2)),
    lambda m, x: m._C._nn.fractional_max_pool2d(x, [2, 2], [2, 2], m.rand(3, 2)),
    lambda m, x: m._C._nn.fractional_max_pool2d(x, [2, 2], [2, 2], m.rand(1, 3, 2)),
    lambda m, x: m._C._nn.fractional_max_pool2d(x, [2, 2], [2, 2], m.rand(2, 2, 2)),
    lambda m, x: m._C._nn.fractional_max_pool2d(x, [2, 2], [2, 2], m.rand(2, 3, 1)),
    lambda m, x: m._C._nn.fractional_max_pool2d(x, [2, 2], [2, 2], m.rand(2, 3, 2).double()),
    lambda m, x: m._C._nn.fractional_max_pool2d(x.long(), [2, 2], [2, 2], m.rand(2, 3, 2).long()),
    lambda m, x: m._C._nn.fractional_max_pool3d(x, [2, 2, 2], [2, 2, 2], m.rand(2, 3, 3)),
    lambda m, x: m._C._nn.fractional_max_pool3d(x[None], [2, 2], [2, 2, 2], m.rand(1, 2, 3)),
    lambda m, x: m._C._nn.fractional_max_pool3d(x[None], [2, 2, 2], [1, 2, 2], m.rand(1, 2, 2)),
    lambda m, x: m._C._nn.fractional_max_pool3d(x[None], [2, 2, 2], [1, 4, 2], m.rand(1, 2, 3)),
    lambda m, x: m.ops.aten.fractional_max_pool2d_backward(m.ones(2, 3, 2, 3), x, [2, 2], [2, 2],
                                                           m.zeros(2, 3, 2, 2, dtype=m.long)),
    lambda m, x: m.ops.aten.fractional_max_pool2d_backward(m.ones(2, 3, 2, 2), x, [2, 2], [2, 2],
                                                           m.zeros(2, 3, 2, 1, dtype=m.long)),
    lambda m, x: m.ops.aten.fractional_max_pool2d_backward(m.ones(2, 3, 2, 2).double(), x, [2, 2], [2, 2],
                                                           m.zeros(2, 3, 2, 2, dtype=m.long)),
    lambda m, x: m.ops.aten.fractional_max_pool3d_backward(m.ones(1, 2, 3, 2, 2), x[None], [2, 2, 2], [2, 2, 2],
                                                           m.zeros(1, 2, 2, 2, 2, dtype=m.long)),
    lambda m, x: m.ops.aten.fractional_max_pool3d_backward(m.ones(1, 2, 2, 2, 3), x[None], [2, 2, 2], [2, 2, 2],
                                                           m.zeros(1, 2, 2, 2, 2, dtype=m.long)),
    lambda m, x: m.nn.FractionalMaxPool2d(2),
    lambda m, x: m.nn.FractionalMaxPool2d(2, 3, 0.5),
    lambda m, x: m.nn.FractionalMaxPool2d(2, output_ratio=1.5),
    lambda m, x: m.nn.FractionalMaxPool3d(0, 3),
]


@pytest.mark.parametrize("fn", ERRORS)
def test_fmp_errors_match_torch(fn):
    assert_same_error(fn, (2, 3, 5, 5))


def test_fmp_modules_against_torch():
    torch = _torch()
    u2 = R.random((2, 3, 2)).astype(np.float32)
    u3 = R.random((2, 3, 3)).astype(np.float32)
    for name, args, kw, shape, u in [
            ("FractionalMaxPool2d", (3,), {"output_size": (4, 5), "return_indices": True}, (2, 3, 9, 10), u2),
            ("FractionalMaxPool2d", ((2, 3),), {"output_ratio": (0.5, 0.6)}, (2, 3, 9, 10), u2),
            ("FractionalMaxPool3d", (2,), {"output_size": 3}, (2, 3, 6, 7, 8), u3),
            ("FractionalMaxPool3d", ((2, 2, 3),), {"output_ratio": 0.5}, (2, 3, 6, 7, 8), u3)]:
        tm = getattr(torch.nn, name)(*args, **kw, _random_samples=torch.tensor(u))
        lm = getattr(nn, name)(*args, **kw, _random_samples=torchlet.tensor(u))
        assert repr(lm) == repr(tm)
        assert (lm.kernel_size, lm.output_size, lm.output_ratio) == (tm.kernel_size, tm.output_size, tm.output_ratio)
        x = R.standard_normal(shape).astype(np.float32)
        to, lo = tm(torch.tensor(x)), lm(torchlet.tensor(x))
        if isinstance(to, tuple):
            np.testing.assert_array_equal(_n(lo[1]), to[1].numpy())
            to, lo = to[0], lo[0]
        np.testing.assert_array_equal(_n(lo), to.numpy())
        assert "_random_samples" in dict(lm.named_buffers())


def test_fmp_autocast_float32():
    x = torchlet.randn(1, 2, 8, 8).to(torchlet.bfloat16)
    with torchlet.autocast("cpu", dtype=torchlet.bfloat16):
        assert F.fractional_max_pool2d(x, 2, output_size=4).dtype == torchlet.float32
