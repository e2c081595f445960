"""unique(dim=) (unique_dim) and unique_consecutive(dim=) (unique_dim_consecutive):
the distinct slices along a dimension, against numpy (np.unique(axis=)) always
and PyTorch when installed; every dtype, odd shapes, non-contiguous inputs,
empty dimensions and PyTorch's errors."""
import numpy as np
import pytest

import torchlet as tl

NAN = float("nan")
DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"]


def tn(x):
    return np.asarray(x.numpy())


def np_unique_consecutive(a, axis):
    """The first slice of each run of equal slices along axis, the run index of
    each slice and the run lengths."""
    m = np.moveaxis(a, axis, 0).reshape(a.shape[axis], -1)
    starts = [0] + [i for i in range(1, m.shape[0]) if not np.array_equal(m[i], m[i - 1])]
    inv = np.cumsum([i in starts for i in range(m.shape[0])]) - 1
    counts = np.diff(starts + [m.shape[0]])
    return np.take(a, starts, axis=axis), inv, counts


def sample(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    return rng.integers(0, 3, size=shape).astype(dtype)   # few values: repeated slices


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,dim", [((9,), 0), ((7, 2), 0), ((2, 7), 1), ((3, 8, 2), 1), ((2, 3, 9), -1),
                                       ((1, 1), 0), ((4, 1, 3), 0)])
def test_unique_dim_matches_numpy(dtype, shape, dim):
    a = sample(dtype, shape)
    out, inv, cnt = tl.unique(tl.from_numpy(a), dim=dim, return_inverse=True, return_counts=True)
    eo, ei, ec = np.unique(a, axis=dim, return_inverse=True, return_counts=True)
    assert out.dtype == getattr(tl, dtype if dtype != "bool" else "bool")
    np.testing.assert_array_equal(tn(out), eo)
    np.testing.assert_array_equal(tn(inv), ei.reshape(-1))
    np.testing.assert_array_equal(tn(cnt), ec)
    assert inv.dtype == tl.int64 and cnt.dtype == tl.int64


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,dim", [((9,), 0), ((9,), -1), ((7, 2), 0), ((2, 7), 1), ((3, 8, 2), 1)])
def test_unique_consecutive_dim_matches_numpy(dtype, shape, dim):
    a = sample(dtype, shape, seed=1)
    a = np.repeat(a, 2, axis=dim)   # runs of equal slices
    out, inv, cnt = tl.unique_consecutive(tl.from_numpy(a), dim=dim, return_inverse=True, return_counts=True)
    eo, ei, ec = np_unique_consecutive(a, dim)
    np.testing.assert_array_equal(tn(out), eo)
    np.testing.assert_array_equal(tn(inv), ei)
    np.testing.assert_array_equal(tn(cnt), ec)


def test_unique_dim_non_contiguous_and_outputs():
    a = sample("float64", (6, 5), seed=3)
    x = tl.from_numpy(a).t()   # a transposed view
    out = x.unique(dim=1)
    np.testing.assert_array_equal(tn(out), np.unique(a.T, axis=1))
    out, cnt = tl.unique(x, dim=0, return_counts=True)
    np.testing.assert_array_equal(tn(cnt), np.unique(a.T, axis=0, return_counts=True)[1])
    out, inv = x.unique_consecutive(dim=1, return_inverse=True)
    np.testing.assert_array_equal(tn(inv), np_unique_consecutive(a.T, 1)[1])
    # the operators themselves (no torchlet.unique_dim, as torch) always give the inverse and the counts
    assert not hasattr(tl, "unique_dim") and not hasattr(tl, "unique_dim_consecutive")
    o, i, c = tl.ops.aten.unique_dim(tl.tensor([[1, 2], [1, 2], [0, 5]]), 0)
    assert o.tolist() == [[0, 5], [1, 2]] and i.tolist() == [1, 1, 0] and c.tolist() == [1, 2]
    o, i, c = tl.ops.aten.unique_dim_consecutive(tl.tensor([[1, 2], [1, 2], [0, 5], [1, 2]]), 0)
    assert o.tolist() == [[1, 2], [0, 5], [1, 2]] and i.tolist() == [0, 0, 1, 2] and c.tolist() == [2, 1, 1]


def test_unique_dim_floats_by_value():
    x = tl.tensor([[NAN, 1.0], [NAN, 1.0], [-0.0, 2.0], [0.0, 2.0]])
    out, inv, cnt = tl.unique(x, dim=0, return_inverse=True, return_counts=True)
    assert out.shape == (3, 2)   # NaN never equal; -0.0 == 0.0
    assert tn(out)[2].tolist() == [0.0, 2.0] and inv.tolist()[2:] == [2, 2] and cnt.tolist()[2] == 2


def test_unique_dim_empty():
    for shape, dim in [((2, 0, 3), 1), ((0, 3), 0), ((0,), 0), ((3, 0), -1)]:
        out, inv, cnt = tl.unique(tl.zeros(*shape), dim=dim, return_inverse=True, return_counts=True)
        assert out.shape == shape and inv.shape == (0,) and cnt.shape == (0,)
        out = tl.unique_consecutive(tl.zeros(*shape), dim=dim)
        assert out.shape == shape
    with pytest.raises(RuntimeError, match="There are 0 sized dimensions, and they aren't selected"):
        tl.unique(tl.zeros(2, 0, 3), dim=0)
    with pytest.raises(RuntimeError, match="There are 0 sized dimensions, and they aren't selected"):
        tl.unique_consecutive(tl.zeros(2, 0, 3), dim=2)
    with pytest.raises(RuntimeError, match="Number of zero sized dimensions is more than one"):
        tl.unique(tl.zeros(0, 0, 3), dim=0)


def test_unique_dim_errors():
    with pytest.raises(IndexError, match="Dimension specified as 0 but tensor has no dimensions"):
        tl.unique(tl.tensor(3.0), dim=0)
    with pytest.raises(IndexError, match="Dimension specified as 1 but tensor has no dimensions"):
        tl.unique_consecutive(tl.tensor(3.0), dim=1)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"):
        tl.unique(tl.zeros(2, 3), dim=2)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "int16", "uint8", "bool"])
@pytest.mark.parametrize("shape,dim", [((10, 3), 0), ((3, 10), 1), ((2, 6, 2), 1), ((5,), 0), ((4, 5), -1)])
@pytest.mark.parametrize("consecutive", [False, True])
def test_unique_dim_like_torch(dtype, shape, dim, consecutive):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    t = torch.from_numpy(rng.integers(0, 2, size=shape)).to(getattr(torch, dtype))
    x = tl.tensor(t.to(torch.float64).numpy()).to(getattr(tl, dtype))
    if consecutive:
        got = tl.unique_consecutive(x, return_inverse=True, return_counts=True, dim=dim)
        exp = torch.unique_consecutive(t, return_inverse=True, return_counts=True, dim=dim)
    else:
        got = tl.unique(x, sorted=True, return_inverse=True, return_counts=True, dim=dim)
        exp = torch.unique(t, sorted=True, return_inverse=True, return_counts=True, dim=dim)
    for g, e in zip(got, exp):
        assert tuple(g.shape) == tuple(e.shape)
        np.testing.assert_array_equal(tn(g.to(tl.float64)), e.to(torch.float64).numpy())
