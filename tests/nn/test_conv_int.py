"""Integer convolutions: conv1d/2d/3d and conv_transpose1d/2d/3d for the
integer dtypes PyTorch's CPU slow kernels take (int64 everywhere; the other
integer dtypes plain, neither dilated nor transposed), exact with wrapping
sums. Against a numpy reference (an int64 loop over the window, wrapped to
the dtype) always, against torch where installed (values, dtypes, the
NotImplementedError of each kernel PyTorch picks)."""
import itertools

import numpy as np
import pytest

import torchlet
import torchlet.nn.functional as F

R = np.random.default_rng(20261206)


def _torch():
    return pytest.importorskip("torch")


def _n(t):
    return np.asarray(t.numpy())


def np_conv(x, w, b, stride, padding, dilation, groups):
    """direct int64 correlation (x [N, C, *s], w [O, C/G, *k]); numpy int64 wraps like C"""
    nd = x.ndim - 2
    N, C = x.shape[:2]
    O = w.shape[0]
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    osz = [(xp.shape[2 + i] - dilation[i] * (w.shape[2 + i] - 1) - 1) // stride[i] + 1 for i in range(nd)]
    out = np.zeros((N, O, *osz), dtype=np.int64)
    cg, og = C // groups, O // groups
    for o in range(O):
        g = o // og
        for k in itertools.product(*[range(s) for s in w.shape[2:]]):
            sl = tuple(slice(k[i] * dilation[i], k[i] * dilation[i] + stride[i] * (osz[i] - 1) + 1, stride[i])
                       for i in range(nd))
            patch = xp[(slice(None), slice(g * cg, (g + 1) * cg)) + sl]
            out[:, o] += np.einsum("nc...,c->n...", patch, w[(o, slice(None)) + k])
        if b is not None:
            out[:, o] += b[o]
    return out


def np_conv_transpose(x, w, b, stride, padding, output_padding, dilation, groups):
    """scatter form (x [N, Cin, *s], w [Cin, O/G, *k])"""
    nd = x.ndim - 2
    N, C = x.shape[:2]
    og = w.shape[1]
    O = og * groups
    cg = C // groups
    full = [(x.shape[2 + i] - 1) * stride[i] + dilation[i] * (w.shape[2 + i] - 1) + 1 + output_padding[i]
            for i in range(nd)]
    out = np.zeros((N, O, *full), dtype=np.int64)
    for c in range(C):
        g = c // cg
        for k in itertools.product(*[range(s) for s in w.shape[2:]]):
            sl = tuple(slice(k[i] * dilation[i], k[i] * dilation[i] + stride[i] * (x.shape[2 + i] - 1) + 1, stride[i])
                       for i in range(nd))
            out[(slice(None), slice(g * og, (g + 1) * og)) + sl] += np.einsum(
                "n...,o->no...", x[:, c], w[(c, slice(None)) + k])
    out = out[(slice(None), slice(None)) + tuple(slice(p, f - p) for p, f in zip(padding, full))]
    if b is not None:
        out += b.reshape((1, -1) + (1,) * nd)
    return out


CASES = [  # nd, N, C, O, size, kernel, stride, padding, dilation, groups
    (1, 2, 3, 4, (9,), (3,), (1,), (0,), (1,), 1),
    (1, 1, 4, 2, (8,), (2,), (2,), (1,), (2,), 2),
    (2, 2, 3, 2, (6, 7), (3, 2), (1, 2), (1, 0), (1, 1), 1),
    (2, 1, 4, 4, (5, 6), (2, 3), (2, 1), (0, 1), (2, 1), 2),
    (3, 2, 2, 3, (4, 5, 4), (2, 3, 2), (1, 1, 2), (1, 0, 1), (1, 1, 1), 1),
    (3, 1, 2, 2, (5, 4, 6), (2, 2, 3), (2, 1, 1), (0, 1, 0), (1, 2, 1), 2),
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("bias", [False, True])
def test_int64_conv_numpy(case, bias):
    nd, N, C, O, size, k, s, p, d, g = case
    x = R.integers(-50, 50, (N, C, *size))
    w = R.integers(-50, 50, (O, C // g, *k))
    b = R.integers(-1000, 1000, (O,)) if bias else None
    conv = getattr(F, f"conv{nd}d")
    got = conv(torchlet.tensor(x), torchlet.tensor(w), torchlet.tensor(b) if bias else None, s, p, d, g)
    assert got.dtype == torchlet.int64
    np.testing.assert_array_equal(_n(got), np_conv(x, w, b, s, p, d, g))


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("bias", [False, True])
def test_int64_conv_transpose_numpy(case, bias):
    nd, N, C, O, size, k, s, p, d, g = case
    op = tuple(min(si, di) - 1 for si, di in zip(s, d))
    x = R.integers(-50, 50, (N, C, *size))
    w = R.integers(-50, 50, (C, O // g, *k))
    b = R.integers(-1000, 1000, (O,)) if bias else None
    ct = getattr(F, f"conv_transpose{nd}d")
    got = ct(torchlet.tensor(x), torchlet.tensor(w), torchlet.tensor(b) if bias else None, s, p, op, g, d)
    assert got.dtype == torchlet.int64
    np.testing.assert_array_equal(_n(got), np_conv_transpose(x, w, b, s, p, op, d, g))


def test_int64_wraps_and_noncontiguous():
    # products beyond 2^63 wrap exactly, as PyTorch's int64 GEMM
    x = np.full((1, 1, 3), 2 ** 40, dtype=np.int64)
    w = np.full((1, 1, 2), 2 ** 30, dtype=np.int64)
    np.testing.assert_array_equal(_n(F.conv1d(torchlet.tensor(x), torchlet.tensor(w))),
                                  np_conv(x, w, None, (1,), (0,), (1,), 1))
    x = R.integers(-9, 9, (2, 5, 6, 3))  # [N, H, W, C]: permuted to a non-contiguous [N, C, H, W]
    xt = torchlet.tensor(x).permute(0, 3, 1, 2)
    w = R.integers(-9, 9, (4, 3, 2, 2))
    np.testing.assert_array_equal(_n(F.conv2d(xt, torchlet.tensor(w))),
                                  np_conv(x.transpose(0, 3, 1, 2), w, None, (1, 1), (0, 0), (1, 1), 1))


@pytest.mark.parametrize("dt", ["int32", "int16", "int8", "uint8"])
def test_small_int_conv_wraps_in_dtype(dt):
    lo, hi = (0, 255) if dt == "uint8" else (-100, 100)
    x = R.integers(lo, hi, (2, 3, 6, 5)).astype(dt)
    w = R.integers(lo, hi, (2, 3, 3, 2)).astype(dt)
    got = F.conv2d(torchlet.tensor(x), torchlet.tensor(w), None, 1, 1)
    assert str(got.dtype) == f"torchlet.{dt}"
    want = np_conv(x.astype(np.int64), w.astype(np.int64), None, (1, 1), (1, 1), (1, 1), 1).astype(dt)
    np.testing.assert_array_equal(_n(got), want)


@pytest.mark.parametrize("dt", ["int64", "int32", "uint8", "int8"])
@pytest.mark.parametrize("case", CASES)
def test_int_conv_against_torch(dt, case):
    torch = _torch()
    nd, N, C, O, size, k, s, p, d, g = case
    x = R.integers(0, 120, (N, C, *size)).astype(dt)
    w = R.integers(0, 120, (O, C // g, *k)).astype(dt)
    b = R.integers(0, 120, (O,)).astype(dt)
    name = f"conv{nd}d"
    try:
        want = getattr(torch.nn.functional, name)(torch.tensor(x), torch.tensor(w), torch.tensor(b), s, p, d, g)
    except NotImplementedError as e:
        with pytest.raises(NotImplementedError) as le:
            getattr(F, name)(torchlet.tensor(x), torchlet.tensor(w), torchlet.tensor(b), s, p, d, g)
        assert str(le.value).split("\n")[0] == str(e).split("\n")[0]
        return
    got = getattr(F, name)(torchlet.tensor(x), torchlet.tensor(w), torchlet.tensor(b), s, p, d, g)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_array_equal(_n(got), want.numpy())
    # transposed
    wt = R.integers(0, 120, (C, O // g, *k)).astype(dt)
    op = tuple(min(si, di) - 1 for si, di in zip(s, d))
    name = f"conv_transpose{nd}d"
    try:
        want = getattr(torch.nn.functional, name)(torch.tensor(x), torch.tensor(wt), torch.tensor(b), s, p, op, g, d)
    except NotImplementedError as e:
        with pytest.raises(NotImplementedError) as le:
            getattr(F, name)(torchlet.tensor(x), torchlet.tensor(wt), torchlet.tensor(b), s, p, op, g, d)
        assert str(le.value).split("\n")[0] == str(e).split("\n")[0]
        return
    got = getattr(F, name)(torchlet.tensor(x), torchlet.tensor(wt), torchlet.tensor(b), s, p, op, g, d)
    np.testing.assert_array_equal(_n(got), want.numpy())


@pytest.mark.parametrize("dt", ["int64", "int32", "bool"])
@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("transposed, dilation", [(False, 1), (False, 2), (True, 1)])
@pytest.mark.parametrize("mask", [(True, False, False), (False, True, False), (False, False, True)])
def test_int_convolution_backward_against_torch(dt, nd, transposed, dilation, mask):
    torch = _torch()
    x = R.integers(0, 3, (1, 2, *([5] * nd))).astype(dt)
    w = R.integers(0, 3, ((2, 3) if transposed else (3, 2)) + (3,) * nd).astype(dt)
    args = lambda m: (m.ones(*y.shape, dtype=getattr(m, dt)), m.tensor(x), m.tensor(w),  # noqa: E731
                      [3 if not transposed else 3], [1] * nd, [0] * nd, [dilation] * nd, transposed, [0] * nd, 1,
                      list(mask))
    y = torch.ops.aten.convolution(torch.tensor(x).long(), torch.tensor(w).long(), None, [1] * nd, [0] * nd,
                                   [dilation] * nd, transposed, [0] * nd, 1)
    try:
        want = torch.ops.aten.convolution_backward(*args(torch))
    except NotImplementedError as e:
        with pytest.raises(NotImplementedError) as le:
            torchlet.ops.aten.convolution_backward(*args(torchlet))
        assert str(le.value) == str(e).split("\n")[0]
        return
    got = torchlet.ops.aten.convolution_backward(*args(torchlet))
    for gv, tv in zip(got, want):
        if tv is None or gv is None:
            continue
        np.testing.assert_array_equal(_n(gv), tv.numpy())


def test_bool_conv_raises_like_torch():
    torch = _torch()
    x, w = np.ones((1, 2, 5, 5), bool), np.ones((3, 2, 3, 3), bool)
    with pytest.raises(NotImplementedError) as te:
        torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w))
    with pytest.raises(NotImplementedError) as le:
        F.conv2d(torchlet.tensor(x), torchlet.tensor(w))
    assert str(le.value) == str(te.value).split("\n")[0]
