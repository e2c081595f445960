"""3-d pooling (max_pool3d, avg_pool3d, adaptive_max_pool3d), fold / unfold,
max_unpool1d/2d/3d, embedding_bag and multilabel_margin_loss, their backward
and layers -- against numpy references always (windows, blocks and bags
written out from PyTorch's rules), against torch where it is installed
(values, indices, gradients, messages), float64 gradients through the
project's gradcheck helper."""
import itertools
import sys
from pathlib import Path

import numpy as np
import pytest

import torchlet
import torchlet.nn as nn
import torchlet.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "autograd"))
from _gradcheck_util import gradcheck  # noqa: E402

R = np.random.default_rng(33)


def _torch():
    return pytest.importorskip("torch")


def _n(t):
    return np.asarray(t.detach().numpy()) if hasattr(t, "detach") else np.asarray(t.numpy())


def _distinct(*shape):
    return (R.permutation(int(np.prod(shape))).reshape(shape) * 0.25 - 3.0).astype(np.float64)


# ------------------------------------------------------------------ numpy references


def _osz(n, k, p, s, d, ceil):
    num = n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)
    o = num // s + 1
    if ceil and (o - 1) * s >= n + p:
        o -= 1
    return o


def _t3(v):
    return (v,) * 3 if isinstance(v, int) else tuple(v)


def np_max_pool3d(x, k, s=None, p=0, d=1, ceil=False):
    k, s, p, d = _t3(k), _t3(k if s is None else s), _t3(p), _t3(d)
    sp = x.shape[-3:]
    out = [_osz(sp[i], k[i], p[i], s[i], d[i], ceil) for i in range(3)]
    xf = x.reshape(-1, *sp)
    y = np.zeros((xf.shape[0], *out), x.dtype)
    ind = np.zeros((xf.shape[0], *out), np.int64)
    for o in itertools.product(*[range(n) for n in out]):
        best, bi = None, None
        for t in itertools.product(*[range(k[i]) for i in range(3)]):
            pos = [o[i] * s[i] - p[i] + t[i] * d[i] for i in range(3)]
            if all(0 <= pos[i] < sp[i] for i in range(3)):
                v = xf[:, pos[0], pos[1], pos[2]]
                flat = (pos[0] * sp[1] + pos[1]) * sp[2] + pos[2]
                if best is None:
                    best, bi = v.copy(), np.full(v.shape, flat)
                else:
                    m = v > best
                    best[m], bi[m] = v[m], flat
        y[(slice(None), *o)] = best
        ind[(slice(None), *o)] = bi
    return y.reshape(*x.shape[:-3], *out), ind.reshape(*x.shape[:-3], *out)


def np_avg_pool3d(x, k, s=None, p=0, ceil=False, cip=True, div=None):
    k, s, p = _t3(k), _t3(k if s is None else s), _t3(p)
    sp = x.shape[-3:]
    out = [_osz(sp[i], k[i], p[i], s[i], 1, ceil) for i in range(3)]
    xf = x.reshape(-1, *sp)
    y = np.zeros((xf.shape[0], *out), x.dtype)
    for o in itertools.product(*[range(n) for n in out]):
        lo = [o[i] * s[i] - p[i] for i in range(3)]
        hi = [min(lo[i] + k[i], sp[i] + p[i]) for i in range(3)]
        pool = np.prod([hi[i] - lo[i] for i in range(3)])
        lo = [max(v, 0) for v in lo]
        hi = [min(hi[i], sp[i]) for i in range(3)]
        win = xf[:, lo[0]:hi[0], lo[1]:hi[1], lo[2]:hi[2]]
        n = div if div else (pool if cip else win[0].size)
        y[(slice(None), *o)] = win.sum(axis=(1, 2, 3)) / n
    return y.reshape(*x.shape[:-3], *out)


def np_unfold(x, kernel_size, dilation=1, padding=0, stride=1):
    k, d, p, s = [(v, v) if isinstance(v, int) else tuple(v) for v in (kernel_size, dilation, padding, stride)]
    N, C, H, W = x.shape
    xp = np.zeros((N, C, H + 2 * p[0], W + 2 * p[1]), x.dtype)
    xp[:, :, p[0]:p[0] + H, p[1]:p[1] + W] = x
    oh = (H + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (W + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    cols = np.zeros((N, C, k[0], k[1], oh, ow), x.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            cols[:, :, i, j] = xp[:, :, i * d[0]:i * d[0] + s[0] * oh:s[0], j * d[1]:j * d[1] + s[1] * ow:s[1]]
    return cols.reshape(N, C * k[0] * k[1], oh * ow)


def np_embedding_bag(w, idx, offsets, mode, psw=None, pad=None, last=False):
    nb = len(offsets) - 1 if last else len(offsets)
    ends = list(offsets[1:nb]) + [len(idx)]
    out = np.zeros((nb, w.shape[1]), w.dtype)
    for b in range(nb):
        rows = [(i, idx[i]) for i in range(offsets[b], ends[b]) if idx[i] != pad]
        if not rows:
            continue
        vals = np.stack([w[r] * (psw[i] if psw is not None else 1) for i, r in rows])
        out[b] = vals.sum(0) if mode == "sum" else vals.mean(0) if mode == "mean" else vals.max(0)
    return out


def np_multilabel_margin(x, t, reduction):
    x2, t2 = np.atleast_2d(x), np.atleast_2d(t)
    rows = []
    for xr, tr in zip(x2, t2):
        tg = []
        for v in tr:
            if v < 0:
                break
            tg.append(v)
        s = sum(max(0.0, 1 - xr[j] + xr[d]) for j in tg for d in range(len(xr)) if d not in tg)
        rows.append(s / len(xr))
    rows = np.array(rows)
    if reduction == "none":
        return rows if x.ndim == 2 else rows.sum()
    return rows.mean() if reduction == "mean" else rows.sum()


# ------------------------------------------------------------------ forward vs numpy


@pytest.mark.parametrize("shape,args", [
    ((2, 3, 5, 6, 7), dict(kernel_size=2)),
    ((2, 4, 5, 6), dict(kernel_size=(3, 2, 2), stride=(2, 1, 2), padding=(1, 1, 0))),
    ((1, 2, 7, 5, 6), dict(kernel_size=3, stride=2, padding=1, dilation=(2, 1, 1), ceil_mode=True)),
    ((1, 1, 4, 4, 4), dict(kernel_size=3, stride=2, ceil_mode=True)),
])
def test_max_pool3d_numpy(shape, args):
    x = _distinct(*shape)
    y, ind = F.max_pool3d(torchlet.tensor(x), return_indices=True, **args)
    ry, rind = np_max_pool3d(x, args["kernel_size"], args.get("stride"), args.get("padding", 0),
                             args.get("dilation", 1), args.get("ceil_mode", False))
    np.testing.assert_array_equal(_n(y), ry)
    np.testing.assert_array_equal(_n(ind), rind)
    # float32, a non-contiguous view, the module
    xt = torchlet.tensor(np.ascontiguousarray(np.swapaxes(x, -1, -2)).astype(np.float32)).transpose(-1, -2)
    np.testing.assert_array_equal(_n(nn.MaxPool3d(**args)(xt)), ry.astype(np.float32))


@pytest.mark.parametrize("shape,args", [
    ((2, 3, 5, 6, 7), dict(kernel_size=2)),
    ((2, 4, 5, 6), dict(kernel_size=(3, 2, 2), stride=(2, 1, 2), padding=(1, 1, 0))),
    ((1, 2, 7, 5, 6), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)),
    ((1, 2, 4, 5, 6), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, divisor_override=5)),
])
def test_avg_pool3d_numpy(shape, args):
    x = R.standard_normal(shape)
    y = F.avg_pool3d(torchlet.tensor(x), **args)
    ref = np_avg_pool3d(x, args["kernel_size"], args.get("stride"), args.get("padding", 0),
                        args.get("ceil_mode", False), args.get("count_include_pad", True),
                        args.get("divisor_override"))
    np.testing.assert_allclose(_n(y), ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_n(nn.AvgPool3d(**args)(torchlet.tensor(x.astype(np.float32)))), ref, rtol=1e-5,
                               atol=1e-6)


def test_avg_pool3d_int64_truncates():
    x = np.arange(2 * 4 * 4 * 4).reshape(2, 4, 4, 4)
    y = F.avg_pool3d(torchlet.tensor(x), 2, divisor_override=3)
    ref = np_avg_pool3d(x.astype(np.float64), 2, div=1)
    np.testing.assert_array_equal(_n(y), np.trunc(ref / 3).astype(np.int64))


def test_adaptive_max_pool3d_numpy():
    x = _distinct(2, 3, 5, 7, 6)
    y, ind = F.adaptive_max_pool3d(torchlet.tensor(x), (2, 3, None), return_indices=True)
    assert tuple(y.shape) == (2, 3, 2, 3, 6)
    for o in itertools.product(range(2), range(3), range(6)):
        sl = []
        for i, (n, m) in enumerate(zip((5, 7, 6), (2, 3, 6))):
            sl.append(slice(o[i] * n // m, -(-(o[i] + 1) * n // m)))
        win = x[:, :, sl[0], sl[1], sl[2]].reshape(2, 3, -1)
        np.testing.assert_array_equal(_n(y)[:, :, o[0], o[1], o[2]], win.max(-1))
    flat = x.reshape(2, 3, -1)
    np.testing.assert_array_equal(np.take_along_axis(flat, _n(ind).reshape(2, 3, -1), -1), _n(y).reshape(2, 3, -1))


def test_max_pool3d_int_and_nan():
    x = torchlet.tensor(np.arange(64, dtype=np.int32).reshape(1, 4, 4, 4))
    np.testing.assert_array_equal(_n(F.max_pool3d(x, 2)), np_max_pool3d(np.arange(64).reshape(1, 4, 4, 4), 2)[0])
    a = np.ones((1, 1, 1, 2, 2))
    a[0, 0, 0, 0, 0] = a[0, 0, 0, 1, 0] = np.nan
    y, i = F.max_pool3d(torchlet.tensor(a), (1, 2, 2), return_indices=True)
    assert np.isnan(_n(y)).all() and int(_n(i).item()) == 2  # the last NaN, as PyTorch


@pytest.mark.parametrize("shape,args", [
    ((2, 3, 5, 6), dict(kernel_size=2)),
    ((2, 3, 5, 6), dict(kernel_size=(2, 3), dilation=(1, 2), padding=(1, 0), stride=(2, 1))),
    ((3, 6, 4), dict(kernel_size=3, padding=1)),
])
def test_unfold_fold_numpy(shape, args):
    x = R.standard_normal(shape)
    cols = F.unfold(torchlet.tensor(x), **args)
    x4 = x if x.ndim == 4 else x[None]
    ref = np_unfold(x4, **args)
    np.testing.assert_array_equal(_n(cols), ref if x.ndim == 4 else ref[0])
    # fold is unfold's adjoint: <unfold(x), c> == <x, fold(c)>
    c = R.standard_normal(ref.shape if x.ndim == 4 else ref.shape[1:])
    back = F.fold(torchlet.tensor(c), shape[-2:], **args)
    assert tuple(back.shape) == shape
    np.testing.assert_allclose(np.sum(_n(back) * x), np.sum(c * (ref if x.ndim == 4 else ref[0])), rtol=1e-10)
    assert tuple(nn.Unfold(**args)(torchlet.tensor(x)).shape) == tuple(cols.shape)
    assert tuple(nn.Fold(shape[-2:], **args)(torchlet.tensor(c)).shape) == shape


def test_unfold_bool_and_float16():
    x = R.random((1, 2, 4, 5)) < 0.5
    np.testing.assert_array_equal(_n(F.unfold(torchlet.tensor(x), 2)), np_unfold(x, 2))
    c = _n(F.fold(torchlet.tensor(np_unfold(x, 2)), (4, 5), 2))
    assert c.dtype == np.bool_ and (c == x).all()
    h = R.standard_normal((1, 2, 4, 5)).astype(np.float16)
    np.testing.assert_array_equal(_n(F.unfold(torchlet.tensor(h), 2)), np_unfold(h, 2))


def test_unfold_errors():
    with pytest.raises(RuntimeError, match="Expected 3D or 4D"):
        F.unfold(torchlet.zeros(2, 3), 2)
    with pytest.raises(RuntimeError, match="its components must be at least one"):
        F.unfold(torchlet.zeros(1, 1, 2, 2), 3)
    with pytest.raises(RuntimeError, match="divisible by the product of kernel_size"):
        F.fold(torchlet.zeros(1, 5, 4), (3, 3), 2)
    with pytest.raises(RuntimeError, match="match the calculated number of sliding blocks"):
        F.fold(torchlet.zeros(1, 4, 5), (3, 3), 2)
    with pytest.raises(NotImplementedError, match="im2col_out_cpu"):
        F.unfold(torchlet.zeros(1, 1, 3, 3, dtype=torchlet.int64), 2)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_unpool_roundtrip(nd):
    shape = {1: (2, 3, 8), 2: (2, 3, 6, 8), 3: (1, 2, 4, 6, 4)}[nd]
    x = _distinct(*shape)
    pool = getattr(F, f"max_pool{nd}d")
    unpool = getattr(F, f"max_unpool{nd}d")
    y, ind = pool(torchlet.tensor(x), 2, return_indices=True)
    u = _n(unpool(y, ind, 2))
    # every pooled maximum back at its place, zeros elsewhere
    flat = np.zeros(x.reshape(*shape[:-nd], -1).shape)
    np.put_along_axis(flat, _n(ind).reshape(*shape[:-nd], -1), _n(y).reshape(*shape[:-nd], -1), -1)
    np.testing.assert_array_equal(u, flat.reshape(shape))
    m = getattr(nn, f"MaxUnpool{nd}d")(2)
    np.testing.assert_array_equal(_n(m(y, ind)), u)
    big = [s + 1 for s in shape[-nd:]]
    assert tuple(unpool(y, ind, 2, output_size=big).shape)[-nd:] == tuple(big)
    with pytest.raises(ValueError, match="invalid output_size"):
        unpool(y, ind, 2, output_size=[s + 2 for s in shape[-nd:]])


def test_max_unpool_errors():
    y = torchlet.ones(1, 2, 2)
    with pytest.raises(RuntimeError, match="Found an invalid max index: 9"):
        torchlet._C._nn.max_unpool2d(y, torchlet.tensor([[[0, 9], [1, 2]]]), [3, 3])
    with pytest.raises(RuntimeError, match="elements in indices should be type int64"):
        torchlet._C._nn.max_unpool2d(y, torchlet.zeros(1, 2, 2, dtype=torchlet.int32), [3, 3])
    with pytest.raises(NotImplementedError, match="max_unpool2d"):
        torchlet._C._nn.max_unpool2d(y.long(), torchlet.zeros(1, 2, 2, dtype=torchlet.int64), [3, 3])


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_numpy(mode):
    w = R.standard_normal((7, 4))
    idx = np.array([1, 4, 2, 2, 0, 3, 6, 1, 5])
    offs = np.array([0, 3, 3, 6])
    y = F.embedding_bag(torchlet.tensor(idx), torchlet.tensor(w), torchlet.tensor(offs), mode=mode)
    np.testing.assert_allclose(_n(y), np_embedding_bag(w, idx, offs, mode), rtol=1e-12)
    y = F.embedding_bag(torchlet.tensor(idx), torchlet.tensor(w), torchlet.tensor(offs), mode=mode, padding_idx=2)
    np.testing.assert_allclose(_n(y), np_embedding_bag(w, idx, offs, mode, pad=2), rtol=1e-12)
    y = F.embedding_bag(torchlet.tensor(idx.reshape(3, 3)), torchlet.tensor(w.astype(np.float32)), mode=mode)
    np.testing.assert_allclose(_n(y), np_embedding_bag(w, idx, [0, 3, 6], mode), rtol=1e-6)
    y = F.embedding_bag(torchlet.tensor(idx), torchlet.tensor(w), torchlet.tensor(np.array([0, 3, 5, 9])),
                        mode=mode, include_last_offset=True)
    np.testing.assert_allclose(_n(y), np_embedding_bag(w, idx, [0, 3, 5, 9], mode, last=True), rtol=1e-12)
    if mode == "sum":
        psw = R.standard_normal(9)
        y = F.embedding_bag(torchlet.tensor(idx), torchlet.tensor(w), torchlet.tensor(offs), mode=mode,
                            per_sample_weights=torchlet.tensor(psw))
        np.testing.assert_allclose(_n(y), np_embedding_bag(w, idx, offs, mode, psw=psw), rtol=1e-12)


@pytest.mark.parametrize("dtype,mode", list(itertools.product([np.float32, np.float64], ["sum", "mean", "max"])))
def test_embedding_bag_wide_rows(dtype, mode):
    # 150 columns: the bag sum's full column chunks (64 float32 / 32 float64) and a remainder; more
    # indices than the prefetch distance, padding entries, an empty bag
    w = R.standard_normal((40, 150)).astype(dtype)
    idx = R.integers(0, 40, 57)
    idx[[3, 20, 21]] = 7
    offs = np.array([0, 5, 5, 30, 31])
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for pad in (None, 7):
        y = F.embedding_bag(torchlet.tensor(idx), torchlet.tensor(w), torchlet.tensor(offs), mode=mode,
                            padding_idx=pad)
        np.testing.assert_allclose(_n(y), np_embedding_bag(w.astype(np.float64), idx, offs, mode, pad=pad),
                                   rtol=tol, atol=tol)
    if mode == "sum":
        psw = R.standard_normal(57).astype(dtype)
        y = F.embedding_bag(torchlet.tensor(idx), torchlet.tensor(w), torchlet.tensor(offs), mode=mode,
                            per_sample_weights=torchlet.tensor(psw))
        np.testing.assert_allclose(_n(y), np_embedding_bag(w.astype(np.float64), idx, offs, mode,
                                                           psw=psw.astype(np.float64)), rtol=tol, atol=tol)


@pytest.mark.parametrize("k,s,p,ceil", [(2, 2, 0, False), (3, 2, 1, True), (3, 1, 1, False),
                                         ((2, 3, 3), (1, 2, 3), (1, 1, 0), True)])
def test_max_pool3d_rows_against_torch(k, s, p, ceil):
    # the row sweep over interior columns and the per-output edges: values and indices, ties and NaNs
    torch = _torch()
    x = np.round(R.standard_normal((2, 3, 5, 7, 19)), 1)
    x[0, 1, 2, 3, 4] = x[1, 2, 0, 0, 9] = np.nan
    for dt in (np.float32, np.float64):
        y, i = F.max_pool3d(torchlet.tensor(x.astype(dt)), k, s, p, ceil_mode=ceil, return_indices=True)
        yt, it = torch.nn.functional.max_pool3d(torch.tensor(x.astype(dt)), k, s, p, ceil_mode=ceil,
                                                return_indices=True)
        np.testing.assert_array_equal(_n(y), yt.numpy())
        np.testing.assert_array_equal(_n(i), it.numpy())


def test_embedding_bag_module_and_errors():
    w = torchlet.tensor(R.standard_normal((5, 3)))
    m = nn.EmbeddingBag.from_pretrained(w, mode="sum")
    assert not m.weight.requires_grad and repr(m) == "EmbeddingBag(5, 3, mode='sum')"
    np.testing.assert_allclose(_n(m(torchlet.tensor([[0, 1], [2, 4]]))),
                               np_embedding_bag(_n(w), [0, 1, 2, 4], [0, 2], "sum"))
    e = nn.EmbeddingBag(10, 3, padding_idx=-1)
    assert e.padding_idx == 9 and (_n(e.weight)[9] == 0).all()
    with pytest.raises(ValueError, match="offsets has to be None"):
        F.embedding_bag(torchlet.tensor([[0, 1]]), w, torchlet.tensor([0]))
    with pytest.raises(NotImplementedError, match="per_sample_weights is only supported for mode='sum'"):
        F.embedding_bag(torchlet.tensor([0, 1]), w, torchlet.tensor([0]), per_sample_weights=torchlet.ones(2))
    with pytest.raises(RuntimeError, match=r"Index 1 of input takes value 7 which is not in the valid range \[0, 5\)"):
        F.embedding_bag(torchlet.tensor([1, 7]), w, torchlet.tensor([0]))
    with pytest.raises(RuntimeError, match="offsets\\[0\\] has to be 0"):
        F.embedding_bag(torchlet.tensor([1, 2]), w, torchlet.tensor([1]))


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_multilabel_margin_numpy(reduction):
    x = R.standard_normal((4, 5))
    t = np.array([[3, 0, -1, 1, 2], [1, 2, 3, 4, 0], [-1, 0, 0, 0, 0], [4, -1, 2, 2, 2]])
    y = F.multilabel_margin_loss(torchlet.tensor(x), torchlet.tensor(t), reduction=reduction)
    np.testing.assert_allclose(_n(y), np_multilabel_margin(x, t, reduction), rtol=1e-12)
    y1 = nn.MultiLabelMarginLoss(reduction=reduction)(torchlet.tensor(x[0]), torchlet.tensor(t[0]))
    assert y1.dim() == 0
    np.testing.assert_allclose(_n(y1), np_multilabel_margin(x[0], t[0], reduction), rtol=1e-12)
    with pytest.raises(RuntimeError, match="inconsistent target size"):
        F.multilabel_margin_loss(torchlet.tensor(x), torchlet.tensor(t[:, :3]))


# ------------------------------------------------------------------ gradients


@pytest.mark.parametrize("fn,shape", [
    (lambda x: F.max_pool3d(x, (2, 3, 2), stride=(1, 2, 2), padding=(1, 1, 0)), (1, 2, 4, 5, 4)),
    (lambda x: F.avg_pool3d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False), (2, 5, 4, 6)),
    (lambda x: F.adaptive_max_pool3d(x, (2, 3, 2)), (1, 2, 5, 4, 3)),
    (lambda x: F.unfold(x, (2, 3), dilation=(2, 1), padding=1, stride=(1, 2)), (2, 2, 5, 4)),
    (lambda x: F.fold(x, (4, 5), 2, stride=1), (2, 8, 12)),
    (lambda x: F.multilabel_margin_loss(x, torchlet.tensor([[2, 0, -1, 1], [1, -1, 0, 0]])), (2, 4)),
])
def test_gradcheck(fn, shape):
    x = _distinct(*shape) * 0.37 if len(shape) > 2 else R.standard_normal(shape)
    assert gradcheck(fn, [x])


def test_embedding_bag_gradcheck():
    idx = torchlet.tensor([1, 4, 2, 2, 0, 3, 4])
    offs = torchlet.tensor([0, 3, 3, 5])
    for mode in ("sum", "mean", "max"):
        assert gradcheck(lambda w, m=mode: F.embedding_bag(idx, w, offs, mode=m, padding_idx=3), [_distinct(5, 3)])
    assert gradcheck(lambda w, p: F.embedding_bag(idx, w, offs, mode="sum", per_sample_weights=p),
                     [R.standard_normal((5, 3)), R.standard_normal(7)])


# ------------------------------------------------------------------ torch


def _tt(torch, x):
    return torch.tensor(np.asarray(x))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_pool3d_against_torch(dtype):
    torch = _torch()
    x = R.standard_normal((2, 3, 6, 5, 7))
    tl_x = torchlet.tensor(x).to(getattr(torchlet, dtype))
    t_x = _tt(torch, x).to(getattr(torch, dtype))
    tol = dict(rtol=1e-2, atol=1e-2) if dtype in ("float16", "bfloat16") else dict(rtol=1e-5, atol=1e-6)
    cases = [
        (lambda f, m, a: f.max_pool3d(a, 3, 2, 1, return_indices=True)),
        (lambda f, m, a: f.max_pool3d(a, (2, 3, 2), (1, 2, 2), 0, (2, 1, 1), True, True)),
        (lambda f, m, a: f.avg_pool3d(a, 3, 2, 1, True, False)),
        (lambda f, m, a: f.avg_pool3d(a, (2, 3, 2), None, (1, 1, 0), False, True, 4)),
        (lambda f, m, a: f.adaptive_max_pool3d(a, (4, 2, 3), True)),
    ]
    for c in cases:
        if dtype in ("float16", "bfloat16") and c in cases[2:4]:  # avg_pool3d: float32 / float64 / int64 on CPU
            for lib, f, a in ((torchlet, F, tl_x), (torch, torch.nn.functional, t_x)):
                with pytest.raises(NotImplementedError, match="avg_pool3d_out_frame"):
                    c(f, lib, a)
            continue
        r1, r2 = c(F, torchlet, tl_x), c(torch.nn.functional, torch, t_x)
        for a, b in zip(r1 if isinstance(r1, tuple) else (r1,), r2 if isinstance(r2, tuple) else (r2,)):
            b = b.float() if b.is_floating_point() else b
            np.testing.assert_allclose(_n(a.float() if a.is_floating_point() else a), b.numpy(), **tol)


def test_backward_against_torch():
    torch = _torch()
    x = R.standard_normal((2, 3, 5, 6, 4))
    for fn in (lambda f, a: f.max_pool3d(a, 2, 1, 1, 2),
               lambda f, a: f.avg_pool3d(a, 3, 2, 1, True, True, None),
               lambda f, a: f.adaptive_max_pool3d(a, (2, 4, 3)),
               lambda f, a: f.unfold(a.reshape(6, 5, 6, 4), (2, 2), 1, 1, (2, 1))):
        a = torchlet.tensor(x, requires_grad=True)
        b = _tt(torch, x).requires_grad_()
        ya, yb = fn(F, a), fn(torch.nn.functional, b)
        g = R.standard_normal(tuple(yb.shape))
        ya.backward(torchlet.tensor(g))
        yb.backward(_tt(torch, g))
        np.testing.assert_allclose(_n(ya), yb.detach().numpy(), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(_n(a.grad), b.grad.numpy(), rtol=1e-12, atol=1e-12)
        assert type(ya.grad_fn).__name__ == type(yb.grad_fn).__name__


def test_embedding_bag_and_losses_against_torch():
    torch = _torch()
    w = R.standard_normal((8, 5))
    idx = np.array([1, 4, 2, 2, 0, 3, 7, 1, 5, 6])
    offs = np.array([0, 3, 3, 7])
    for mode, pad, psw, freq in (("sum", None, None, False), ("mean", 2, None, False), ("max", 1, None, False),
                                 ("sum", 4, R.standard_normal(10), False), ("mean", None, None, True),
                                 ("sum", 2, R.standard_normal(10), True)):
        a = torchlet.tensor(w, requires_grad=True)
        b = _tt(torch, w).requires_grad_()
        pa = torchlet.tensor(psw, requires_grad=True) if psw is not None else None
        pb = _tt(torch, psw).requires_grad_() if psw is not None else None
        ya = F.embedding_bag(torchlet.tensor(idx), a, torchlet.tensor(offs), mode=mode, padding_idx=pad,
                             per_sample_weights=pa, scale_grad_by_freq=freq)
        yb = torch.nn.functional.embedding_bag(_tt(torch, idx), b, _tt(torch, offs), mode=mode, padding_idx=pad,
                                               per_sample_weights=pb, scale_grad_by_freq=freq)
        np.testing.assert_allclose(_n(ya), yb.detach().numpy(), rtol=1e-12)
        g = R.standard_normal(tuple(yb.shape))
        ya.backward(torchlet.tensor(g))
        yb.backward(_tt(torch, g))
        np.testing.assert_allclose(_n(a.grad), b.grad.numpy(), rtol=1e-12, atol=1e-14)
        if psw is not None:
            np.testing.assert_allclose(_n(pa.grad), pb.grad.numpy(), rtol=1e-12)
        ra = torchlet._embedding_bag(torchlet.tensor(w), torchlet.tensor(idx), torchlet.tensor(offs), False,
                                     {"sum": 0, "mean": 1, "max": 2}[mode], False, None, False,
                                     -1 if pad is None else pad)
        rb = torch._embedding_bag(_tt(torch, w), _tt(torch, idx), _tt(torch, offs), False,
                                  {"sum": 0, "mean": 1, "max": 2}[mode], False, None, False, -1 if pad is None else pad)
        for u, v in zip(ra[1:], rb[1:]):
            np.testing.assert_array_equal(_n(u), v.numpy())
    x = R.standard_normal((3, 6))
    t = np.array([[3, 0, -1, 1, 2, 2], [1, 2, 3, 4, 0, 5], [-1, 0, 0, 0, 0, 0]])
    for red in ("none", "mean", "sum"):
        a = torchlet.tensor(x, requires_grad=True)
        b = _tt(torch, x).requires_grad_()
        ya = F.multilabel_margin_loss(a, torchlet.tensor(t), reduction=red)
        yb = torch.nn.functional.multilabel_margin_loss(b, _tt(torch, t), reduction=red)
        np.testing.assert_allclose(_n(ya), yb.detach().numpy(), rtol=1e-12)
        ya.sum().backward()
        yb.sum().backward()
        np.testing.assert_allclose(_n(a.grad), b.grad.numpy(), rtol=1e-12)


def test_messages_against_torch():
    torch = _torch()
    cases = [
        lambda f, m: f.max_pool3d(m.zeros(1, 2, 2, 2, 2), 3),
        lambda f, m: f.max_pool3d(m.zeros(2, 2, 2), 1),
        lambda f, m: f.avg_pool3d(m.zeros(1, 2, 2, 2, 2), 3),
        lambda f, m: f.avg_pool3d(m.zeros(1, 4, 4, 4), 2, divisor_override=0),
        lambda f, m: f.max_pool3d(m.zeros(1, 4, 4, 4), 2, padding=2),
        lambda f, m: f.adaptive_max_pool3d(m.zeros(1, 0, 2, 2, 2), 2),
        lambda f, m: f.unfold(m.zeros(1, 1, 2, 2), 3),
        lambda f, m: f.fold(m.zeros(1, 4, 5), (3, 3), 2),
        lambda f, m: f.multilabel_margin_loss(m.zeros(2, 3), m.zeros(2, 2, dtype=m.int64)),
        lambda f, m: m._C._nn.max_unpool2d(m.ones(1, 2, 2), m.zeros(1, 2, 2, dtype=m.int64), [-1, 3]),
        lambda f, m: m._C._nn.max_unpool3d(m.ones(1, 1, 2, 2), m.zeros(1, 1, 2, 2, dtype=m.int64), [2, -1, 2],
                                           [1, 1, 1], [0, 0, 0]),
        lambda f, m: m._embedding_bag(m.ones(3, 2), m.tensor([0, 1]), m.tensor([0]), False, 5),
        lambda f, m: m._C._nn.adaptive_max_pool3d(m.ones(1, 2, 2, 2), [-1, 1, 1]),
        lambda f, m: f.embedding_bag(m.tensor([0, 1]), m.ones(3, 2), m.tensor([0, 3])),
    ]
    for c in cases:
        with pytest.raises(Exception) as ea:
            c(F, torchlet)
        with pytest.raises(Exception) as eb:
            c(torch.nn.functional, torch)
        assert type(ea.value).__name__ == type(eb.value).__name__, (ea.value, eb.value)
        assert str(ea.value) == str(eb.value).split("\n")[0], (ea.value, eb.value)


def test_module_reprs_against_torch():
    torch = _torch()
    for make in (lambda m: m.nn.EmbeddingBag(5, 3, mode="sum", padding_idx=1, max_norm=2.0, scale_grad_by_freq=True),
                 lambda m: m.nn.MaxUnpool2d(2), lambda m: m.nn.MaxUnpool3d(2, 1, 1), lambda m: m.nn.MaxUnpool1d(3),
                 lambda m: m.nn.Fold((4, 5), 2), lambda m: m.nn.Unfold(2, padding=1),
                 lambda m: m.nn.MaxPool3d(2, 1, 1, 2, True, True), lambda m: m.nn.AvgPool3d(3, 2, 1),
                 lambda m: m.nn.AdaptiveMaxPool3d((2, None, 3)), lambda m: m.nn.MultiLabelMarginLoss(reduction="sum")):
        assert repr(make(torchlet)) == repr(make(torch))
