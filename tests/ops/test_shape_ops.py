"""Shape operators (kernels/native/shape_ops.c): cat (+ out=), stack (+ out=), hstack, vstack, split (int and list),
split_with_sizes, chunk, unbind, flatten, unflatten, narrow.

Values against numpy always (exact: these operators only move elements),
against torch when installed (values, dtypes, strides of views, errors);
every dtype, negative dims, non-contiguous inputs, 0-dim and empty tensors,
out= (resize, dtype rules, overlap), views sharing storage, Meta tensors,
errors with PyTorch's types and wording, and gradients through the view
decompositions."""
import warnings

import numpy as np
import pytest

import torchlet as tl

from ops_helpers import ALL, NAMES, needs_torch, torch
from shape_index_helpers import leaf, make_vals, mk, npv, raises, same, tt

R = np.random.default_rng(61)
vals = make_vals(R)


# ------------------------------------------------------------------ cat


@pytest.mark.parametrize("dt", ALL, ids=lambda d: NAMES[d])
def test_cat_dtypes_dims(dt):
    a, b, c = vals((2, 3, 4), dt), vals((2, 1, 4), dt), vals((2, 5, 4), dt)
    for d in (1, -2):
        same(tl.cat([mk(a, dt), mk(b, dt), mk(c, dt)], d), np.concatenate([a, b, c], 1), dt)
    same(tl.cat([mk(a, dt), mk(a, dt)]), np.concatenate([a, a], 0), dt)
    same(tl.cat([mk(a, dt), mk(a, dt)], dim=-1), np.concatenate([a, a], 2), dt)
    same(tl.cat((mk(a, dt),)), a, dt)   # tuple input, one tensor: a copy
    x = mk(a, dt)
    assert not shares(tl.cat([x]), x)


def test_cat_non_contiguous_and_promotion():
    a, b = vals((4, 3)), vals((3, 5))
    ta, tb = mk(a).t(), mk(b, tl.float64)[:, ::2]   # (3, 4) transposed, (3, 3) stepped
    same(tl.cat([ta, tb], 1), np.concatenate([a.T, b[:, ::2]], 1), tl.float64)
    i8, u8 = mk(vals((2, 2)), tl.int8), mk(vals((2, 2)), tl.uint8)
    assert tl.cat([i8, u8]).dtype is tl.int16
    assert tl.cat([mk(vals((2,)), tl.bool), mk(vals((3,)), tl.int32)]).dtype is tl.int32
    assert tl.cat([mk(vals((2,)), tl.float16), mk(vals((3,)), tl.bfloat16)]).dtype is tl.float32
    r = tl.cat([ta, ta], 0)
    assert r.is_contiguous() and r.stride() == (4, 1)


def test_cat_legacy_empty_and_empty_dims():
    a = vals((2, 3))
    e1 = tl.empty(0, dtype=tl.float64)
    same(tl.cat([e1, mk(a), e1], 1), a, tl.float64)            # 1-D empty: skipped, still promotes
    same(tl.cat([e1, e1]), np.zeros(0), tl.float64)
    same(tl.cat([mk(np.zeros((2, 0))), mk(a)], 1), a)
    same(tl.cat([mk(np.zeros((0, 3))), mk(a)]), a)


def test_cat_out():
    a, b = vals((2, 3)), vals((1, 3))
    out = tl.empty(3, 3, dtype=tl.float64)
    r = tl.cat([mk(a), mk(b)], out=out)
    assert r is out
    same(out, np.concatenate([a, b]), tl.float64)     # float32 inputs cast into float64 out
    out = tl.empty(0)
    tl.cat([mk(a), mk(b)], out=out)
    same(out, np.concatenate([a, b]))
    out = tl.empty(5, 5)
    with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
        tl.cat([mk(a), mk(b)], out=out)
    assert out.shape == (3, 3)
    outt = tl.empty(3, 3).t()                          # strided out=
    tl.cat([mk(a), mk(b)], out=outt)
    same(outt, np.concatenate([a, b]))
    raises(TypeError, "torch.cat(): input types can't be cast to the desired output type Long",
           lambda: tl.cat([mk(a), mk(b)], out=tl.empty(3, 3, dtype=tl.int64)))
    x = mk(vals((2, 2)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # refused before out= is resized: no resize warning
        raises(RuntimeError, "unsupported operation: some elements of the input tensor and the written-to tensor refer "
               "to a single memory location. Please clone() the tensor before performing the operation.",
               lambda: tl.cat([x, x], out=x))


def test_cat_errors():
    a = mk(vals((2, 2)))
    raises(RuntimeError, "Sizes of tensors must match except in dimension 1. Expected size 2 but got size 3 for tensor "
           "number 1 in the list.", lambda: tl.cat([a, mk(vals((3, 2)))], 1))
    raises(RuntimeError, "Sizes of tensors must match except in dimension 0. Expected size 2 but got size 3 for tensor "
           "number 2 in the list.", lambda: tl.cat([a, a, mk(vals((2, 3)))]))
    raises(RuntimeError, "Tensors must have same number of dimensions: got 2 and 3",
           lambda: tl.cat([a, mk(vals((2, 2, 2)))]))
    # PyTorch: ValueError from cat's meta function; torchlet's Python binding checks it
    # (docs/OPS_SHAPE_INDEX.md, deviations)
    raises(ValueError, "torch.cat(): expected a non-empty list of Tensors", lambda: tl.cat([]))
    raises(IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)", lambda: tl.cat([a], 2))
    raises(RuntimeError, "zero-dimensional tensor (at position 1) cannot be concatenated",
           lambda: tl.cat([a, mk(1.0)]))
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        tl.cat([a, tl.empty(2, 2, device="meta")])
    with pytest.raises(TypeError):
        tl.cat([a, 1.0])


def test_cat_meta():
    r = tl.cat([tl.empty(2, 3, device="meta"), tl.empty(4, 3, device="meta", dtype=tl.float64)])
    assert r.device.type == "meta" and r.shape == (6, 3) and r.dtype is tl.float64


@needs_torch
@pytest.mark.parametrize("dt", ALL, ids=lambda d: NAMES[d])
def test_cat_stack_against_torch(dt):
    xs = [mk(vals((3, 2, 4), dt), dt), mk(vals((3, 5, 4), dt), dt).transpose(0, 2).transpose(0, 2)]
    xs.append(mk(vals((4, 1, 3), dt), dt).permute(2, 1, 0))
    ts = [tt(x) for x in xs]
    r, e = tl.cat(xs, -2), torch.cat(ts, -2)
    np.testing.assert_array_equal(npv(r), e.double().numpy())
    assert NAMES[r.dtype] == str(e.dtype).split(".")[-1] and r.stride() == e.stride()
    ys = [mk(vals((2, 3), dt), dt) for _ in range(3)]
    for d in (0, 1, 2, -1, -3):
        r, e = tl.stack(ys, d), torch.stack([tt(y) for y in ys], d)
        np.testing.assert_array_equal(npv(r), e.double().numpy())
        assert r.shape == tuple(e.shape)


# ---------------------------------------------------------------- stack


def test_stack():
    a, b = vals((2, 3)), vals((2, 3))
    same(tl.stack([mk(a), mk(b)]), np.stack([a, b]))
    same(tl.stack([mk(a), mk(b)], -1), np.stack([a, b], -1))
    same(tl.stack([mk(a).t(), mk(b).t()], 1), np.stack([a.T, b.T], 1))
    same(tl.stack([mk(1.0), mk(2.0)]), np.array([1.0, 2.0]))            # 0-dim inputs
    same(tl.stack([tl.empty(0), tl.empty(0)], 1), np.zeros((0, 2)))      # empty
    assert tl.stack([mk(a, tl.int32), mk(b, tl.float16)]).dtype is tl.float16
    out = tl.empty(0, dtype=tl.float64)
    assert tl.stack([mk(a), mk(b)], 1, out=out) is out
    same(out, np.stack([a, b], 1), tl.float64)
    raises(RuntimeError, "stack expects each tensor to be equal size, but got [2, 3] at entry 0 and [3, 2] at entry 1",
           lambda: tl.stack([mk(a), mk(b).t()]))
    raises(RuntimeError, "stack expects a non-empty TensorList", lambda: tl.stack([]))
    raises(IndexError, "Dimension out of range (expected to be in range of [-3, 2], but got 3)",
           lambda: tl.stack([mk(a)], 3))


def test_hstack_vstack():
    a, b = vals((3,)), vals((2,))
    same(tl.hstack([mk(a), mk(b)]), np.hstack([a, b]))
    m, n = vals((2, 3)), vals((2, 1))
    same(tl.hstack([mk(m), mk(n)]), np.hstack([m, n]))
    same(tl.hstack([mk(1.0), mk(a)]), np.hstack([1.0, a]))
    same(tl.vstack([mk(a), mk(a)]), np.vstack([a, a]))
    c = vals((1, 3))
    same(tl.vstack([mk(m), mk(c), mk(a)]), np.vstack([m, c, a]))
    same(tl.vstack([mk(2.0)]), np.vstack([2.0]))
    raises(RuntimeError, "hstack expects a non-empty TensorList", lambda: tl.hstack([]))
    raises(RuntimeError, "vstack expects a non-empty TensorList", lambda: tl.vstack([]))


# -------------------------------------------------------- split and views


def shares(a, b):
    return tl._lib.tl_tensor_is_alias_of(a._p, b._p) == 1


@pytest.mark.parametrize("dt", [tl.bool, tl.int64, tl.bfloat16, tl.float32], ids=lambda d: NAMES[d])
def test_split_chunk_unbind_values(dt):
    a = vals((7, 4), dt)
    x = mk(a, dt)
    ps = tl.split(x, 3)
    assert isinstance(ps, tuple) and [p.shape for p in ps] == [(3, 4), (3, 4), (1, 4)]
    for p, r in zip(ps, np.split(a, [3, 6])):
        same(p, r, dt)
        assert shares(p, x)
    ps = x.split([2, 0, 5])              # split.sizes
    for p, r in zip(ps, np.split(a, [2, 2])):
        same(p, r, dt)
    ps = tl.split_with_sizes(x, [1, 3], dim=-1)
    same(ps[0], a[:, :1], dt) and same(ps[1], a[:, 1:], dt)
    ps = x.chunk(3, 1)
    assert [p.shape for p in ps] == [(7, 2), (7, 2)]
    ps = tl.unbind(x, 1)
    assert isinstance(ps, tuple) and len(ps) == 4
    for k, p in enumerate(ps):
        same(p, a[:, k], dt)
        assert shares(p, x)


def test_split_edge_cases():
    x = mk(vals((5, 6)))
    assert len(tl.split(x, 10)) == 1 and tl.split(x, 10)[0].shape == (5, 6)    # bigger than the dim
    assert [p.shape for p in tl.split(tl.empty(0), 0)] == [(0,)]
    assert [p.shape for p in tl.split(tl.empty(0, 3), 2)] == [(0, 3)]
    assert [p.shape for p in tl.chunk(tl.empty(0), 3)] == [(0,), (0,), (0,)]   # chunks of an empty dim
    assert [p.shape for p in tl.chunk(x, 4, 1)] == [(5, 2)] * 3
    assert [p.shape for p in tl.chunk(x, 6)] == [(1, 6)] * 5
    assert tl.unbind(tl.empty(0, 2)) == ()
    xt = mk(vals((6, 5))).t()                           # non-contiguous
    for p, r in zip(tl.split(xt, 2, 1), np.split(npv(xt), 3, 1)):
        same(p, r)
    # writes through a piece reach the base (views)
    y = mk(np.zeros((4, 2)))
    tl.chunk(y, 2)[1].fill_(3.0)
    same(y, np.array([[0, 0], [0, 0], [3, 3], [3, 3]], dtype=np.float64))


def test_split_errors():
    x = mk(vals((4, 2)))
    raises(RuntimeError, "split_size can only be 0 if dimension size is 0, but got dimension size of 4",
           lambda: tl.split(x, 0))
    raises(RuntimeError, "split expects split_size be non-negative, but got split_size=-1", lambda: tl.split(x, -1))
    raises(RuntimeError, "split expects at least a 1-dimensional tensor", lambda: tl.split(mk(1.0), 1))
    raises(RuntimeError, "split_with_sizes expects split_sizes to sum exactly to 4 (input tensor's size at dimension 0), "
           "but got split_sizes=[1, 2]", lambda: tl.split(x, [1, 2]))
    raises(RuntimeError, "split_with_sizes expects split_sizes have only non-negative entries, but got "
           "split_sizes=[5, -1]", lambda: tl.split_with_sizes(x, [5, -1]))
    raises(RuntimeError, "chunk expects `chunks` to be greater than 0, got: 0", lambda: tl.chunk(x, 0))
    raises(RuntimeError, "chunk expects at least a 1-dimensional tensor", lambda: tl.chunk(mk(1.0), 1))
    raises(IndexError, "Dimension specified as 0 but tensor has no dimensions", lambda: tl.unbind(mk(1.0)))
    raises(IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)", lambda: tl.unbind(x, 2))
    raises(IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got -3)",
           lambda: tl.split(x, 1, -3))


def test_flatten_unflatten_narrow():
    a = vals((2, 3, 4, 5))
    x = mk(a)
    f = tl.flatten(x)
    same(f, a.reshape(-1))
    assert shares(f, x)
    same(x.flatten(1, 2), a.reshape(2, 12, 5))
    same(x.flatten(-3, -1), a.reshape(2, 60))
    assert x.flatten(2, 2) is x                          # nothing to merge: self itself, like PyTorch
    same(tl.flatten(mk(7.0)), np.array([7.0]))
    xt = x.transpose(0, 3)                                 # not viewable: a copy
    same(xt.flatten(), a.transpose(3, 1, 2, 0).reshape(-1))
    same(tl.flatten(mk(np.zeros((0, 1, 3, 0))), 1, 2), np.zeros((0, 3, 0)))
    raises(RuntimeError, "flatten() has invalid args: start_dim cannot come after end_dim", lambda: x.flatten(2, 1))
    same(x.unflatten(1, (3, 1)), a.reshape(2, 3, 1, 4, 5))
    same(x.unflatten(-1, (-1, 5)), a.reshape(2, 3, 4, 1, 5))
    raises(RuntimeError, "shape '[2, 2]' is invalid for input of size 3", lambda: x.unflatten(1, (2, 2)))
    raises(RuntimeError, "unflatten: sizes must be non-empty", lambda: x.unflatten(1, ()))
    n = tl.narrow(x, 1, 1, 2)
    same(n, a[:, 1:3])
    assert shares(n, x)
    same(x.narrow(-1, -2, 2), a[..., 3:5])
    same(x.narrow(0, 2, 0), a[2:2])
    raises(RuntimeError, "narrow() cannot be applied to a 0-dim tensor.", lambda: tl.narrow(mk(1.0), 0, 0, 1))
    raises(RuntimeError, "start (2) + length (2) exceeds dimension size (3).", lambda: x.narrow(1, 2, 2))
    raises(IndexError, "start out of range (expected to be in range of [-3, 3], but got 4)", lambda: x.narrow(1, 4, 0))
    raises(RuntimeError, "narrow(): length must be non-negative.", lambda: x.narrow(1, 0, -1))


@needs_torch
def test_views_against_torch():
    a = vals((6, 4, 5))
    x, t = mk(a), torch.from_numpy(a).float()
    for fn in (lambda m, v: m.split(v, 4, -1), lambda m, v: m.split(v, [1, 2, 3]), lambda m, v: m.chunk(v, 4, 1),
               lambda m, v: m.unbind(v, 2), lambda m, v: (m.flatten(v, 0, 1),), lambda m, v: (m.narrow(v, 2, -3, 2),),
               lambda m, v: (v.unflatten(0, (2, -1)),)):
        rs, es = fn(tl, x), fn(torch, t)
        assert type(rs) is type(es) and len(rs) == len(es)
        for r, e in zip(rs, es):
            assert r.shape == tuple(e.shape) and r.stride() == e.stride()
            np.testing.assert_array_equal(npv(r), e.double().numpy())


# ---------------------------------------------------------------- autograd


def test_views_backward():
    a = vals((6, 4))
    x = leaf(a)
    w = mk(vals((6, 4)), tl.float64)
    parts = tl.chunk(x, 3)
    y = sum(((p * w[2 * i:2 * i + 2]).sum() for i, p in enumerate(parts)), mk(0.0, tl.float64))
    y = y + (tl.unbind(x, 1)[2] * 2).sum() + tl.narrow(x, 0, 1, 2).sum() + tl.flatten(x)[5]
    y.backward()
    g = npv(w).copy()
    g[:, 2] += 2
    g[1:3] += 1
    g.reshape(-1)[5] += 1
    np.testing.assert_array_equal(npv(x.grad), g)


def test_cat_stack_backward():
    a, b = leaf(vals((2, 3))), leaf(vals((4, 3)))
    w = mk(vals((6, 3)), tl.float64)
    (tl.cat([a, b]) * w).sum().backward()
    np.testing.assert_array_equal(npv(a.grad), npv(w)[:2])
    np.testing.assert_array_equal(npv(b.grad), npv(w)[2:])
    c, d = leaf(vals((2, 3))), leaf(vals((2, 3)))
    w = mk(vals((2, 2, 3)), tl.float64)
    (tl.stack([c, d], 1) * w).sum().backward()
    np.testing.assert_array_equal(npv(c.grad), npv(w)[:, 0])
    np.testing.assert_array_equal(npv(d.grad), npv(w)[:, 1])
