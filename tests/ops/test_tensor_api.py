"""The tensor API's conversions and helpers (kernels/native/tensor_helpers.c,
runtime/torchlet/_tensor_api.py) and the failures PyTorch's OpInfo samples
found (reflected dunders, cross_entropy with probabilities, embedding
max_norm, layer_norm of one element, arange keywords, writes into empty
numpy-backed tensors, attention on strided inputs): against numpy always,
PyTorch when installed."""
import warnings

import numpy as np
import pytest

import torchlet as tl
import torchlet.nn.functional as F
from torchlet.autograd import gradcheck


def T(a, dtype=None):
    return tl.tensor(np.asarray(a), dtype=dtype)


def rnd(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def torch_or_skip():
    return pytest.importorskip("torch")


# ------------------------------------------------------------ reflected dunders

@pytest.mark.parametrize("dunder,ref", [("__rsub__", lambda s, o: o - s), ("__rpow__", lambda s, o: o ** s),
                                        ("__rmod__", lambda s, o: np.fmod(o, s) + (np.fmod(o, s) * s < 0) * s)])
def test_reflected_dunders_take_a_tensor(dunder, ref):
    s, o = np.array([1.5, 2.0, 3.0]), np.array([4.0, -5.0, 2.5])
    got = getattr(T(s), dunder)(T(o))
    np.testing.assert_allclose(got.numpy(), ref(s, o), rtol=1e-6)
    assert getattr(T(s), dunder)("x") is NotImplemented


def test_reflected_dunders_match_torch():
    torch = torch_or_skip()
    a, b = rnd(2, 3), np.abs(rnd(3, seed=1)) + 0.5
    for d in ("__rsub__", "__rpow__", "__rmod__"):
        got = getattr(T(b), d)(T(a)).numpy()
        exp = getattr(torch.tensor(b), d)(torch.tensor(a)).numpy()
        np.testing.assert_allclose(got, exp, rtol=1e-6, equal_nan=True)


# ------------------------------------------------------------ cross_entropy

@pytest.mark.parametrize("shape", [(4, 5), (5,), (2, 3, 4), (0, 3)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("ls", [0.0, 0.3])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_probability_targets(shape, reduction, ls, weighted):
    torch = torch_or_skip()
    x = rnd(*shape)
    cdim = 0 if len(shape) == 1 else 1
    p = np.exp(rnd(*shape, seed=2))
    p = p / p.sum(axis=cdim, keepdims=True) if p.size else p
    w = np.abs(rnd(shape[cdim], seed=3)) + 0.1 if weighted else None
    kw = dict(reduction=reduction, label_smoothing=ls)
    got = F.cross_entropy(T(x), T(p), weight=None if w is None else T(w), **kw)
    exp = torch.nn.functional.cross_entropy(torch.tensor(x), torch.tensor(p),
                                            weight=None if w is None else torch.tensor(w), **kw)
    np.testing.assert_allclose(got.numpy(), exp.numpy(), rtol=1e-10, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_label_smoothing_with_weight(reduction):
    torch = torch_or_skip()
    x, w = rnd(5, 4), np.abs(rnd(4, seed=1)) + 0.1
    t = np.array([0, 3, -100, 2, 3])
    kw = dict(reduction=reduction, label_smoothing=0.25)
    got = F.cross_entropy(T(x), T(t), weight=T(w), **kw)
    exp = torch.nn.functional.cross_entropy(torch.tensor(x), torch.tensor(t), weight=torch.tensor(w), **kw)
    np.testing.assert_allclose(got.numpy(), exp.numpy(), rtol=1e-10)


def test_cross_entropy_probability_target_errors():
    with pytest.raises(RuntimeError, match="Expected floating point type for target with class probabilities, got Long"):
        F.cross_entropy(T(rnd(2, 3)), tl.zeros(2, 3, dtype=tl.int64))
    with pytest.raises(RuntimeError, match="ignore_index is not supported for floating point target"):
        F.cross_entropy(T(rnd(2, 3)), T(rnd(2, 3)), ignore_index=1)
    with pytest.raises(RuntimeError, match="weight tensor should be defined either for all 3 classes or no classes"):
        F.cross_entropy(T(rnd(2, 3)), T(rnd(2, 3)), weight=tl.ones(2, dtype=tl.float64))
    with pytest.raises(RuntimeError, match="label_smoothing must be between 0.0 and 1.0"):
        F.cross_entropy(T(rnd(2, 3)), T(rnd(2, 3)), label_smoothing=1.5)


def test_cross_entropy_probability_targets_gradcheck():
    x = T(rnd(3, 4)).requires_grad_(True)
    p = np.exp(rnd(3, 4, seed=1))
    p = T(p / p.sum(1, keepdims=True)).requires_grad_(True)
    w = T(np.abs(rnd(4, seed=2)) + 0.1)
    assert gradcheck(lambda a, b: F.cross_entropy(a, b, weight=w, label_smoothing=0.2), (x, p))


# ------------------------------------------------------------ embedding max_norm

@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.5])
def test_embedding_max_norm_renormalises_rows_in_place(norm_type):
    W = rnd(6, 3) * 3
    idx = np.array([[0, 2], [2, 5]])
    w = T(W)
    out = F.embedding(T(idx), w, max_norm=1.0, norm_type=norm_type)
    exp_w = W.copy()
    for r in sorted(set(idx.ravel())):
        n = np.sum(np.abs(W[r]) ** norm_type) ** (1 / norm_type)
        if n > 1.0:
            exp_w[r] = W[r] * (1.0 / (n + 1e-7))
    np.testing.assert_allclose(w.numpy(), exp_w, rtol=1e-12)
    np.testing.assert_allclose(out.numpy(), exp_w[idx], rtol=1e-12)
    np.testing.assert_array_equal(w.numpy()[[1, 3, 4]], W[[1, 3, 4]])  # rows not named stay


def test_embedding_max_norm_matches_torch_and_backward():
    torch = torch_or_skip()
    W = rnd(5, 4) * 2
    idx = np.array([4, 1, 1, 0])
    w, wt = T(W).requires_grad_(True), torch.tensor(W, requires_grad=True)
    a = F.embedding(T(idx), w, max_norm=1.5)
    b = torch.nn.functional.embedding(torch.tensor(idx), wt, max_norm=1.5)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)
    a.sum().backward()
    b.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), wt.grad.numpy())


def test_embedding_renorm_errors_and_sparse():
    with pytest.raises(RuntimeError, match="Expected 2-dimensional tensor, but got 1-dimensional tensor for argument #1 'self'"):
        tl.embedding_renorm_(tl.ones(3), T([0]), 1.0, 2.0)
    with pytest.raises(RuntimeError, match="argument #2 'indices' to have one of the following scalar types: Long, Int"):
        tl.embedding_renorm_(tl.ones(3, 2), tl.ones(1), 1.0, 2.0)
    with pytest.raises(IndexError):
        tl.embedding_renorm_(tl.ones(3, 2), T([7]), 1.0, 2.0)
    # sparse=True: the forward is dense; the backward would need sparse tensors
    w = tl.ones(3, 2, requires_grad=True)
    out = F.embedding(T([0, 1]), w, sparse=True)
    with pytest.raises(NotImplementedError, match="sparse"):
        out.sum().backward()


# ------------------------------------------------------------ layer_norm / arange / empty writes / attention

@pytest.mark.parametrize("dtype", [tl.float32, tl.float64])
def test_layer_norm_of_one_element_is_the_bias(dtype):
    x = tl.tensor([[3.0], [-7.25]], dtype=dtype)
    out = F.layer_norm(x, (1,), tl.tensor([2.0], dtype=dtype), tl.tensor([0.5], dtype=dtype))
    assert out.numpy().tolist() == [[0.5], [0.5]]
    const = tl.full((2, 5), 1.7, dtype=dtype)  # equal rows normalise to exactly 0
    assert (F.layer_norm(const, (5,)).numpy() == 0).all()


def test_arange_keyword_end_after_positional_start():
    assert tl.arange(0, end=3).tolist() == [0, 1, 2]
    assert tl.arange(1, end=7, step=2).tolist() == [1, 3, 5]
    assert tl.arange(end=2).tolist() == [0, 1]
    with pytest.raises(TypeError):
        tl.arange(0, 3, start=1)


def test_inplace_writes_into_empty_numpy_tensor():
    for shape in [(0, 3), (2, 0), (0,), (3, 0, 2)]:
        e = tl.from_numpy(np.empty(shape, dtype=np.float32))
        assert e.fill_(1.0).shape == shape
        assert e.zero_().shape == shape
        assert tl.zeros_like(e).shape == shape
        e.copy_(tl.ones(shape))
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        tl.ones(1).expand(3).fill_(2.0)


def test_sdpa_strided_inputs_as_accurate_as_torch():
    torch = torch_or_skip()
    g = torch.Generator().manual_seed(0)
    for shape, perm in [((2, 3, 5, 8), (0, 2, 1, 3)), ((2, 3, 8, 5), (0, 1, 3, 2)), ((1, 2, 7, 16), None)]:
        q, k, v = (torch.randn(*shape, generator=g) * 3 for _ in range(3))
        if perm:
            q, k, v = (x.permute(*perm) for x in (q, k, v))
        else:
            q, k, v = (x[..., ::2] for x in (q, k, v))
        ref = torch.nn.functional.scaled_dot_product_attention(q.double(), k.double(), v.double()).numpy()
        exp = torch.nn.functional.scaled_dot_product_attention(q, k, v).numpy()
        got = F.scaled_dot_product_attention(*(tl.from_numpy(x.numpy()) for x in (q, k, v))).numpy()
        assert np.abs(got - ref).max() <= 2 * np.abs(exp - ref).max() + 1e-6


# ------------------------------------------------------------ conversions

CONV = [("float", tl.float32), ("double", tl.float64), ("half", tl.float16), ("bfloat16", tl.bfloat16),
        ("int", tl.int32), ("long", tl.int64), ("short", tl.int16), ("char", tl.int8), ("byte", tl.uint8),
        ("bool", tl.bool)]


@pytest.mark.parametrize("name,dtype", CONV)
@pytest.mark.parametrize("shape", [(), (0,), (2, 3)])
def test_dtype_conversion_methods(name, dtype, shape):
    a = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) * 1.5 - 2
    t = T(a)
    r = getattr(t, name)()
    assert r.dtype == dtype and tuple(r.shape) == shape
    assert getattr(r, name)() is r  # same dtype: the tensor itself, as to()
    np.testing.assert_array_equal(r.float().numpy(), tl.tensor(a).to(dtype).float().numpy())


def test_conversion_methods_keep_autograd_and_noncontiguous():
    x = T(rnd(3, 4)).requires_grad_(True)
    y = x.t().float()
    assert y.requires_grad and y.shape == (4, 3)
    y.sum().backward()
    assert x.grad.dtype == tl.float64 and (x.grad.numpy() == 1).all()


def test_cpu_and_type():
    t = tl.ones(2)
    assert t.cpu() is t
    assert t.type() == "torch.FloatTensor"
    assert tl.ones(2, dtype=tl.int64).type() == "torch.LongTensor"
    assert tl.ones(2, device="meta").type() == "torch.meta.FloatTensor"
    assert t.type(tl.float64).dtype == tl.float64
    assert t.type("torch.IntTensor").dtype == tl.int32
    assert t.type(tl.float32) is t
    with pytest.raises(ValueError, match="invalid type: 'foo'"):
        t.type("foo")
    with pytest.raises(TypeError, match="dtype must be a type, str, or dtype object"):
        t.type(3)


def test_as_conversions():
    a = T(np.arange(6.0).reshape(2, 3))
    assert a.type_as(tl.ones(1, dtype=tl.int32)).dtype == tl.int32
    e = tl.ones(3).expand_as(a)
    assert e.shape == (2, 3) and e.stride() == (0, 1)
    v = a.view_as(tl.ones(3, 2))
    assert v.shape == (3, 2) and v.data_ptr() == a.data_ptr()
    r = a.t().reshape_as(tl.ones(6))  # a copy: the transpose is not viewable as 1-D
    assert r.tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    with pytest.raises(RuntimeError):
        a.t().view_as(tl.ones(6))
    x = T(rnd(2, 3)).requires_grad_(True)
    assert gradcheck(lambda t: t.expand_as(tl.ones(4, 2, 3)), (x,))
    assert gradcheck(lambda t: t.type_as(tl.ones(1, dtype=tl.float64)) * 2, (x,))


def test_new_factories():
    a = tl.ones(2, 3, dtype=tl.int16)
    z = a.new_zeros((2, 2))
    assert z.dtype == tl.int16 and z.tolist() == [[0, 0], [0, 0]]
    assert a.new_ones(3, dtype=tl.float64).tolist() == [1.0, 1.0, 1.0]
    assert a.new_full((2,), 7).tolist() == [7, 7] and a.new_full((2,), 7).dtype == tl.int16
    assert a.new_empty((0, 4)).shape == (0, 4)
    assert a.new_zeros(()).shape == ()
    x = tl.ones(2, requires_grad=True)
    assert not x.new_zeros(2).requires_grad
    assert x.new_zeros(2, requires_grad=True).requires_grad if _accepts_requires_grad() else True
    nt = a.new_tensor([1.7, 2.2])
    assert nt.dtype == tl.int16 and nt.tolist() == [1, 2]
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        c = a.new_tensor(tl.ones(2))
    assert "sourceTensor.detach().clone()" in str(w[0].message) and c.dtype == tl.int16


def _accepts_requires_grad():
    try:
        tl.ones(1).new_zeros(1, requires_grad=True)
        return True
    except TypeError:
        return False


# ------------------------------------------------------------ broadcasting / movedim / atleast / meshgrid

def test_broadcast_helpers_against_numpy():
    a, b, c = rnd(3), rnd(2, 1, seed=1), rnd(1, 1, 1, seed=2)
    outs = tl.broadcast_tensors(T(a), T(b), T(c))
    for got, exp in zip(outs, np.broadcast_arrays(a, b, c)):
        np.testing.assert_array_equal(got.numpy(), exp)
    assert isinstance(outs, tuple)
    assert tl.broadcast_to(T(a), (4, 3)).stride() == (0, 1)
    assert tl.broadcast_shapes((2, 1), (3,), 1) == (2, 3)
    assert tl.broadcast_shapes() == ()
    assert tl.broadcast_tensors() == ()
    assert tl.broadcast_tensors(tl.ones(0, 1), tl.ones(3))[0].shape == (0, 3)
    with pytest.raises(RuntimeError, match="The size of tensor a \\(3\\) must match the size of tensor b \\(2\\)"):
        tl.broadcast_tensors(tl.ones(3), tl.ones(2))
    with pytest.raises(RuntimeError, match="Shape mismatch: objects cannot be broadcast to a single shape"):
        tl.broadcast_shapes((3,), (2,))
    with pytest.raises(RuntimeError, match="negative dimension"):
        tl.broadcast_shapes((-1,))
    x = T(rnd(3, 1)).requires_grad_(True)
    assert gradcheck(lambda t: tl.broadcast_to(t, (2, 3, 4)), (x,))
    assert gradcheck(lambda t: tl.broadcast_tensors(t, tl.ones(5, dtype=tl.float64))[0], (x,))


@pytest.mark.parametrize("src,dst", [(0, -1), (-1, 0), ((0, 1), (2, 0)), ([1], [1]), ((0, 2, 3), (3, 0, 1)), ((), ())])
def test_movedim_against_numpy(src, dst):
    a = rnd(2, 3, 4, 5)
    np.testing.assert_array_equal(tl.movedim(T(a), src, dst).numpy(), np.moveaxis(a, src, dst))
    np.testing.assert_array_equal(T(a).moveaxis(src, dst).numpy(), np.moveaxis(a, src, dst))


def test_movedim_edges_and_errors():
    s = tl.tensor(3.0)
    assert tl.movedim(s, 0, -1).shape == ()
    assert tl.movedim(tl.ones(0, 2), 0, 1).shape == (2, 0)
    with pytest.raises(RuntimeError, match=r"movedim: repeated dim in `source` \(\[0, 0\]\)"):
        tl.movedim(tl.ones(2, 3, 4), (0, 0), (1, 2))
    with pytest.raises(RuntimeError, match=r"movedim: repeated dim in `destination` \(\[1, -2\]\)"):
        tl.movedim(tl.ones(2, 3, 4), (0, 1), (1, -2))
    with pytest.raises(RuntimeError, match="movedim: Invalid source or destination dims"):
        tl.movedim(tl.ones(2, 3), (0, 1), (1,))
    with pytest.raises(IndexError, match="Dimension out of range"):
        tl.movedim(tl.ones(2, 3), 2, 0)
    x = T(rnd(2, 3, 4)).requires_grad_(True)
    assert gradcheck(lambda t: tl.movedim(t, (0, 2), (1, 0)), (x,))


def test_movedim_matches_torch_messages():
    torch = torch_or_skip()
    for src, dst in [((0, 0), (1, 2)), ((0, 1), (1, -2)), ((0, 1), (1,))]:
        with pytest.raises(RuntimeError) as e1:
            torch.movedim(torch.ones(2, 3, 4), src, dst)
        with pytest.raises(RuntimeError) as e2:
            tl.movedim(tl.ones(2, 3, 4), src, dst)
        assert str(e1.value) == str(e2.value)


@pytest.mark.parametrize("n,fn", [(1, np.atleast_1d), (2, np.atleast_2d), (3, np.atleast_3d)])
def test_atleast_nd_against_numpy(n, fn):
    f = getattr(tl, f"atleast_{n}d")
    arrays = [np.array(2.5), rnd(4), rnd(2, 3), rnd(2, 3, 4), np.zeros((0,))]
    for a in arrays:
        np.testing.assert_array_equal(f(T(a)).numpy(), fn(a))
    several = f(*[T(a) for a in arrays[:3]])
    assert isinstance(several, tuple) and [t.shape for t in several] == [fn(a).shape for a in arrays[:3]]
    assert [t.shape for t in f([T(arrays[0])])] == [fn(arrays[0]).shape]
    big = T(rnd(2, 3, 4, 5))
    assert f(big).data_ptr() == big.data_ptr() and f(big).shape == big.shape
    x = T(rnd(4)).requires_grad_(True)
    assert gradcheck(lambda t: f(t), (x,))


@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid_against_numpy(indexing):
    a, b, c = rnd(2), rnd(3, seed=1), rnd(4, seed=2)
    got = tl.meshgrid(T(a), T(b), T(c), indexing=indexing)
    for g, e in zip(got, np.meshgrid(a, b, c, indexing=indexing)):
        np.testing.assert_array_equal(g.numpy(), e)
    got = tl.meshgrid([T(a), T(np.array(1.5))], indexing=indexing)
    for g, e in zip(got, np.meshgrid(a, np.array([1.5]), indexing=indexing)):
        np.testing.assert_array_equal(g.numpy(), e)
    assert tl.meshgrid(T(a), indexing=indexing)[0].tolist() == a.tolist()
    x, y = T(a).requires_grad_(True), T(b).requires_grad_(True)
    assert gradcheck(lambda p, q: tl.meshgrid(p, q, indexing=indexing)[0] * tl.meshgrid(p, q, indexing=indexing)[1],
                     (x, y))


def test_meshgrid_errors_and_default_warning():
    with pytest.warns(UserWarning, match="it will be required to pass the indexing argument"):
        g = tl.meshgrid(tl.ones(2), tl.ones(3))
    assert g[0].shape == (2, 3)
    with pytest.raises(RuntimeError, match="meshgrid expects a non-empty TensorList"):
        tl.meshgrid([], indexing="ij")
    with pytest.raises(RuntimeError, match="meshgrid expects all tensors to have the same dtype"):
        tl.meshgrid(tl.ones(2), tl.ones(2, dtype=tl.float64), indexing="ij")
    with pytest.raises(RuntimeError, match='indexing must be one of "xy" or "ij", but received: yx'):
        tl.meshgrid(tl.ones(2), indexing="yx")
    with pytest.raises(RuntimeError, match="Expected 0D or 1D tensor"):
        tl.meshgrid(tl.ones(2, 2), indexing="ij")


# ------------------------------------------------------------ eye / closeness

@pytest.mark.parametrize("n,m", [(0, 0), (1, 1), (3, 3), (2, 5), (5, 2), (0, 3)])
def test_eye_against_numpy(n, m):
    np.testing.assert_array_equal(tl.eye(n, m).numpy(), np.eye(n, m, dtype=np.float32))
    assert tl.eye(n, m, dtype=tl.int64).dtype == tl.int64
    assert tl.eye(n, dtype=tl.bool).numpy().tolist() == np.eye(n, dtype=bool).tolist()
    assert tl.eye(n, device="meta").shape == (n, n)


def test_eye_errors():
    with pytest.raises(RuntimeError, match="n must be greater or equal to 0, got -1"):
        tl.eye(-1)
    with pytest.raises(RuntimeError, match="m must be greater or equal to 0, got -2"):
        tl.eye(2, -2)


def test_isclose_allclose_against_numpy():
    a = np.array([1.0, np.nan, np.inf, -np.inf, 1e-9, 100.0, 0.0])
    b = np.array([1.0 + 1e-9, np.nan, np.inf, np.inf, 0.0, 100.001, -0.0])
    for kw in [{}, {"equal_nan": True}, {"rtol": 1e-3, "atol": 0.0}, {"rtol": 0.0, "atol": 0.0}]:
        np.testing.assert_array_equal(tl.isclose(T(a), T(b), **kw).numpy(), np.isclose(a, b, **kw))
        assert tl.allclose(T(a), T(b), **kw) == np.allclose(a, b, **kw)
        assert T(a).isclose(T(b), **kw).dtype == tl.bool
    ai, bi = np.array([1, 5, 250], dtype=np.uint8), np.array([2, 5, 0], dtype=np.uint8)
    np.testing.assert_array_equal(tl.isclose(T(ai), T(bi), atol=1.5).numpy(), [True, True, False])
    assert tl.isclose(tl.ones(0), tl.ones(0)).shape == (0,)
    assert tl.allclose(tl.ones(0), tl.ones(0))
    nc = T(rnd(4, 3)).t()
    np.testing.assert_array_equal(tl.isclose(nc, nc.contiguous()).numpy(), np.ones((3, 4), bool))
    with pytest.raises(RuntimeError, match="Float did not match Double"):
        tl.isclose(tl.ones(2), tl.ones(2, dtype=tl.float64))
    with pytest.raises(RuntimeError, match="rtol must be greater than or equal to zero, but got -1"):
        tl.isclose(tl.ones(2), tl.ones(2), rtol=-1)
    with pytest.raises(RuntimeError, match="atol must be greater than or equal to zero, but got -1"):
        tl.allclose(tl.ones(2), tl.ones(2), atol=-1)


def test_equal():
    a = T(rnd(2, 3))
    assert tl.equal(a, a.clone()) is True
    assert a.equal(a.t().contiguous().t())
    assert tl.equal(a, a + 1) is False
    assert tl.equal(a, tl.ones(3, 2, dtype=tl.float64)) is False
    assert tl.equal(tl.ones(0), tl.ones(0)) is True
    assert tl.equal(tl.tensor(float("nan")), tl.tensor(float("nan"))) is False
    assert tl.equal(tl.tensor(2), tl.tensor(2)) is True
    with pytest.raises(RuntimeError, match="Expected object of scalar type float but got scalar type double for argument 'other'"):
        tl.equal(tl.ones(2), tl.ones(2, dtype=tl.float64))


def test_helpers_match_torch():
    torch = torch_or_skip()
    a = rnd(3, 1, 4)
    assert tuple(tl.broadcast_shapes((3, 1), (1, 4), 4)) == tuple(torch.broadcast_shapes((3, 1), (1, 4), 4))
    for src, dst in [((0, 2), (2, 1)), (1, -1)]:
        np.testing.assert_array_equal(tl.movedim(T(a), src, dst).numpy(), torch.movedim(torch.tensor(a), src, dst).numpy())
    np.testing.assert_array_equal(tl.eye(3, 4).numpy(), torch.eye(3, 4).numpy())
    x, y = rnd(5), rnd(5) * (1 + 1e-6)
    np.testing.assert_array_equal(tl.isclose(T(x), T(y)).numpy(), torch.isclose(torch.tensor(x), torch.tensor(y)).numpy())
    for name in ("atleast_1d", "atleast_2d", "atleast_3d"):
        assert [tuple(t.shape) for t in getattr(tl, name)(T(np.array(1.0)), T(rnd(2)))] == \
            [tuple(t.shape) for t in getattr(torch, name)(torch.tensor(1.0), torch.tensor(rnd(2)))]
    for name, _ in CONV:
        assert str(getattr(tl.ones(2), name)().dtype).split(".")[-1] == str(getattr(torch.ones(2), name)().dtype).split(".")[-1]
        assert getattr(tl.ones(2), name)().type() == getattr(torch.ones(2), name)().type()
