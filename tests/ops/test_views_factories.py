"""Views, factories and copies through the generated C entry points
(torchlet._C.lib.tl_ops_*), the structured glue (tl_structured_*) on CPU and
Meta tensors, BackendSelect, boxed calls and the dispatcher's tables. Values
are checked against numpy (and torch when installed)."""
import warnings

import numpy as np
import pytest

import torchlet as tl
from torchlet._C import ffi, lib
from torchlet._tensor import _wrap

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

NONE = -1  # Device? / Layout? / MemoryFormat? None
U = lib.TL_DTYPE_UNDEFINED
CONTIGUOUS, PRESERVE = 0, 1


@pytest.fixture(autouse=True, scope="module")
def _registered():
    if lib.tl_op_find(b"aten::zeros") == ffi.NULL:
        lib.tl_clear_error()
        assert lib.tl_ops_register_all() == 0


def T(a):
    return tl.from_numpy(np.array(a, order="C"))


def N(t):
    return np.asarray(t.numpy())


def ints(xs):
    xs = list(xs)
    return ffi.new("int64_t[]", xs or [0]), len(xs)


def sc(v):
    if isinstance(v, bool):
        return lib.tl_scalar_from_bool(v)
    if isinstance(v, int):
        return lib.tl_scalar_from_int(v)
    return lib.tl_scalar_from_double(v)


def call(h):
    return _wrap(h)


def err(fn, exc, match):
    with pytest.raises(exc, match=match):
        fn()


rng = np.random.default_rng(0)


# --------------------------------------------------------------------- views

def test_view_reshape_share_storage_and_version():
    a = T(np.arange(24, dtype=np.float32))
    p, n = ints([2, 3, 4])
    v = call(lib.tl_ops_view(a._h, p, n))
    assert v.shape == (2, 3, 4) and lib.tl_tensor_is_alias_of(v._h, a._h)
    p, n = ints([4, -1])
    r = call(lib.tl_ops_reshape(v._h, p, n))
    np.testing.assert_array_equal(N(r), np.arange(24, dtype=np.float32).reshape(4, 6))
    before = a._version
    call(lib.tl_ops_fill__Scalar(v._h, sc(1.5)))
    assert a._version > before and a._version == v._version == r._version
    assert (N(a) == 1.5).all()
    # a transposed tensor cannot be viewed, reshape copies
    tt = call(lib.tl_ops_transpose_int(v._h, 0, 2))
    p, n = ints([24])
    err(lambda: call(lib.tl_ops_view(tt._h, p, n)), RuntimeError, "view size is not compatible")
    r2 = call(lib.tl_ops_reshape(tt._h, p, n))
    assert not lib.tl_tensor_is_alias_of(r2._h, a._h)


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 5), (1, 4, 1, 3), (0, 3), ()])
def test_views_against_numpy(shape):
    x = rng.standard_normal(shape).astype(np.float64)
    a = T(x)
    nd = len(shape)
    if nd >= 2:
        np.testing.assert_array_equal(N(call(lib.tl_ops_transpose_int(a._h, 0, -1))), np.swapaxes(x, 0, -1))
        perm = list(reversed(range(nd)))
        p, n = ints(perm)
        np.testing.assert_array_equal(N(call(lib.tl_ops_permute(a._h, p, n))), x.transpose(perm))
    if nd <= 2:
        np.testing.assert_array_equal(N(call(lib.tl_ops_t(a._h))), x.T)
    else:
        err(lambda: call(lib.tl_ops_t(a._h)), RuntimeError, rf"t\(\) expects a tensor with <= 2 dimensions, but self is {nd}D")
    np.testing.assert_array_equal(N(call(lib.tl_ops_squeeze(a._h))), x.squeeze())
    np.testing.assert_array_equal(N(call(lib.tl_ops_unsqueeze(a._h, 0))), x[None])
    np.testing.assert_array_equal(N(call(lib.tl_ops_unsqueeze(a._h, -1))), x[..., None])
    if nd:
        for d in range(nd):
            np.testing.assert_array_equal(N(call(lib.tl_ops_squeeze_dim(a._h, d))),
                                          x.squeeze(d) if shape[d] == 1 else x)
        p, n = ints(range(nd))
        np.testing.assert_array_equal(N(call(lib.tl_ops_squeeze_dims(a._h, p, n))), x.squeeze())
        if shape[0]:
            np.testing.assert_array_equal(N(call(lib.tl_ops_select_int(a._h, 0, -1))), x[-1])
        for start, end, step in [(None, None, 1), (1, None, 2), (None, -1, 3), (-100, 100, 1), (2, 1, 1)]:
            s = call(lib.tl_ops_slice_Tensor(a._h, 0, start or 0, start is not None, end or 0, end is not None, step))
            np.testing.assert_array_equal(N(s), x[start:end:step])
            assert lib.tl_tensor_is_alias_of(s._h, a._h)


def test_view_errors():
    a = T(np.zeros((2, 3), np.float32))
    err(lambda: call(lib.tl_ops_slice_Tensor(a._h, 0, 0, False, 0, False, 0)), ValueError, "slice step must be positive")
    err(lambda: call(lib.tl_ops_select_int(a._h, 0, 2)), IndexError, "out of range")
    err(lambda: call(lib.tl_ops_transpose_int(a._h, 0, 5)), IndexError, r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 5\)")
    p, n = ints([0, 0])
    err(lambda: call(lib.tl_ops_squeeze_dims(a._h, p, n)), RuntimeError, "appears multiple times")
    p, n = ints([2, 2])
    q, m = ints([1])
    err(lambda: call(lib.tl_ops_as_strided(a._h, p, n, q, m, 0, False)), RuntimeError, "mismatch in length of strides and shape")


def test_expand_and_as_strided():
    x = np.arange(3, dtype=np.int32)
    a = T(x)
    p, n = ints([4, -1])
    e = call(lib.tl_ops_expand(a._h, p, n, False))
    np.testing.assert_array_equal(N(e), np.broadcast_to(x, (4, 3)))
    assert e.stride() == (0, 1)
    b = T(np.arange(12, dtype=np.float32))
    p, n = ints([3, 2])
    q, m = ints([1, 3])
    s = call(lib.tl_ops_as_strided(b._h, p, n, q, m, 2, True))
    np.testing.assert_array_equal(N(s), np.lib.stride_tricks.as_strided(np.arange(12, dtype=np.float32)[2:], (3, 2), (4, 12)))
    s0 = call(lib.tl_ops_as_strided(s._h, p, n, q, m, 0, False))  # storage_offset=None keeps self's
    assert s0.storage_offset() == 2
    al = call(lib.tl_ops_alias(b._h))
    assert lib.tl_tensor_is_alias_of(al._h, b._h) and al.shape == b.shape


# ----------------------------------------------------------------- factories

def test_factories_dtypes_and_values():
    p, n = ints([2, 3])
    z = call(lib.tl_ops_zeros(p, n, U, NONE, NONE, False, False))
    assert z.dtype == tl.float32 and (N(z) == 0).all() and z.shape == (2, 3)
    o = call(lib.tl_ops_ones(p, n, lib.TL_INT16, NONE, NONE, False, False))
    assert o.dtype == tl.int16 and (N(o) == 1).all()
    for v, dt in [(True, tl.bool), (3, tl.int64), (2.5, tl.float32)]:
        f = call(lib.tl_ops_full(p, n, sc(v), U, NONE, NONE, False, False))
        assert f.dtype == dt and (N(f) == v).all()
    e = call(lib.tl_ops_empty_memory_format(p, n, lib.TL_FLOAT64, NONE, NONE, False, False, NONE))
    assert e.dtype == tl.float64 and e.shape == (2, 3) and e.is_contiguous()
    q, m = ints([1, 2])
    es = call(lib.tl_ops_empty_strided(p, n, q, m, U, NONE, NONE, False, False))
    assert es.stride() == (1, 2)
    p0, n0 = ints([])
    assert call(lib.tl_ops_zeros(p0, n0, U, NONE, NONE, False, False)).shape == ()
    pe, ne = ints([0, 4])
    assert call(lib.tl_ops_ones(pe, ne, U, NONE, NONE, False, False)).numel() == 0
    err(lambda: call(lib.tl_ops_zeros(p, n, U, 1, NONE, False, False)), NotImplementedError, "strided layout")
    pn, nn = ints([-1])
    err(lambda: call(lib.tl_ops_zeros(pn, nn, U, NONE, NONE, False, False)), RuntimeError, "negative")


def test_default_dtype_is_followed():
    p, n = ints([2])
    old = lib.tl_get_default_dtype()
    try:
        lib.tl_set_default_dtype(lib.TL_FLOAT64)
        assert call(lib.tl_ops_zeros(p, n, U, NONE, NONE, False, False)).dtype == tl.float64
        assert call(lib.tl_ops_full(p, n, sc(1.0), U, NONE, NONE, False, False)).dtype == tl.float64
    finally:
        lib.tl_set_default_dtype(old)


ARANGES = [(5,), (0, 5), (1, 10, 3), (10, 1, -3), (0.5, 3), (0, 1, 0.1), (-2.5, 2.5, 0.5), (3, 3), (0, 10, 7)]


@pytest.mark.parametrize("args", ARANGES)
def test_arange_against_numpy(args):
    if len(args) == 1:
        t = call(lib.tl_ops_arange(sc(args[0]), U, NONE, NONE, False, False))
    elif len(args) == 2:
        t = call(lib.tl_ops_arange_start(sc(args[0]), sc(args[1]), U, NONE, NONE, False, False))
    else:
        t = call(lib.tl_ops_arange_start_step(sc(args[0]), sc(args[1]), sc(args[2]), U, NONE, NONE, False, False))
    ref = np.arange(*args)
    want = tl.float32 if any(isinstance(a, float) for a in args) else tl.int64
    assert t.dtype == want and t.shape == ref.shape
    np.testing.assert_allclose(N(t), ref.astype(np.float64), rtol=1e-6, atol=1e-6)
    if torch is not None:
        r = torch.arange(*args)
        assert t.shape == tuple(r.shape) and str(r.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]


def test_arange_dtypes_and_errors():
    t = call(lib.tl_ops_arange_start_step(sc(0), sc(5), sc(1), lib.TL_FLOAT16, NONE, NONE, False, False))
    assert t.dtype == tl.float16 and N(t).tolist() == [0, 1, 2, 3, 4]
    t = call(lib.tl_ops_arange_start_step(sc(0.5), sc(4.7), sc(1.0), lib.TL_INT32, NONE, NONE, False, False))
    assert t.dtype == tl.int32 and N(t).tolist() == [0, 1, 2, 3, 4]  # counted in doubles (int64: [0, 1, 2, 3])
    t = call(lib.tl_ops_arange_start_step(sc(0.5), sc(4.7), sc(1.0), lib.TL_INT64, NONE, NONE, False, False))
    assert N(t).tolist() == [0, 1, 2, 3]
    # the count is a double quotient: 1.1 - 0.1 rounds to 1.0 in double (long double would count 2)
    t = call(lib.tl_ops_arange_start_step(sc(0.1), sc(1.1), sc(1.0), lib.TL_INT8, NONE, NONE, False, False))
    assert N(t).tolist() == [0]
    t = call(lib.tl_ops_arange_start_step(sc(0.1), sc(-7.9), sc(-4.0), lib.TL_UINT8, NONE, NONE, False, False))
    assert N(t).tolist() == [0, 252]
    err(lambda: call(lib.tl_ops_arange_start_step(sc(0), sc(5), sc(0), U, NONE, NONE, False, False)), RuntimeError, "step must be nonzero")
    err(lambda: call(lib.tl_ops_arange_start_step(sc(5), sc(0), sc(1), U, NONE, NONE, False, False)), RuntimeError,
        "upper bound and lower bound inconsistent with step sign")
    err(lambda: call(lib.tl_ops_arange(sc(float("inf")), U, NONE, NONE, False, False)), RuntimeError, "unsupported range")
    m = call(lib.tl_ops_arange(sc(7), U, NONE, lib.TL_META, False, False))
    assert m.device.type == "meta" and m.shape == (7,)


def test_random():
    p, n = ints([1000])
    g = lib.tl_generator_new(42)
    try:
        a = call(lib.tl_ops_rand_generator(p, n, g, U, NONE, NONE, False, False))
        lib.tl_generator_manual_seed(g, 42)
        b = call(lib.tl_ops_rand_generator(p, n, g, U, NONE, NONE, False, False))
        c = call(lib.tl_ops_rand_generator(p, n, g, U, NONE, NONE, False, False))
        x = N(a)
        assert a.dtype == tl.float32 and (x >= 0).all() and (x < 1).all() and 0.4 < x.mean() < 0.6
        assert (N(b) == x).all() and not (N(c) == x).all()
        for dt in (lib.TL_FLOAT16, lib.TL_BFLOAT16, lib.TL_FLOAT64):
            y = call(lib.tl_ops_rand_generator(p, n, g, dt, NONE, NONE, False, False))
            v = N(y).astype(np.float64)
            assert (v >= 0).all() and (v < 1).all()
        pb, nb = ints([20000])
        z = N(call(lib.tl_ops_randn_generator(pb, nb, g, lib.TL_FLOAT64, NONE, NONE, False, False)))
        assert abs(z.mean()) < 0.05 and abs(z.std() - 1) < 0.05
    finally:
        lib.tl_generator_free(g)
    odd, no = ints([3, 3])
    assert call(lib.tl_ops_randn(odd, no, U, NONE, NONE, False, False)).shape == (3, 3)
    err(lambda: call(lib.tl_ops_rand(p, n, lib.TL_INT64, NONE, NONE, False, False)), NotImplementedError,
        "\"check_uniform_bounds\" not implemented for 'Long'")
    err(lambda: call(lib.tl_ops_randn(p, n, lib.TL_INT32, NONE, NONE, False, False)), NotImplementedError,
        "\"normal_kernel_cpu\" not implemented for 'Int'")


def test_factories_on_meta_through_backend_select():
    p, n = ints([4, 5])
    meta = lib.TL_META
    for h in [
        lib.tl_ops_zeros(p, n, U, NONE, meta, False, False),
        lib.tl_ops_ones(p, n, U, NONE, meta, False, False),
        lib.tl_ops_full(p, n, sc(2), U, NONE, meta, False, False),
        lib.tl_ops_empty_memory_format(p, n, U, NONE, meta, False, False, NONE),
        lib.tl_ops_rand(p, n, U, NONE, meta, False, False),
        lib.tl_ops_randn(p, n, U, NONE, meta, False, False),
    ]:
        t = call(h)
        assert t.device.type == "meta" and t.shape == (4, 5) and t.stride() == (5, 1)
    buf = ffi.new("char[4096]")
    lib.tl_dispatch_dump_table(b"aten::zeros", buf, 4096)
    assert "BackendSelect: tl_ops_zeros_backend_select registered at generated/csrc/ops_zeros.c [kernel]" in ffi.string(buf).decode()


def test_like_factories_preserve_layout():
    x = rng.standard_normal((3, 4)).astype(np.float32)
    a = call(lib.tl_ops_t(T(x)._h))  # transposed, dense
    for fn, val in [(lib.tl_ops_zeros_like, 0), (lib.tl_ops_ones_like, 1)]:
        r = call(fn(a._h, U, NONE, NONE, False, False, NONE))
        assert r.stride() == a.stride() and r.dtype == tl.float32 and (N(r) == val).all()
    r = call(lib.tl_ops_full_like(a._h, sc(7), lib.TL_INT8, NONE, NONE, False, False, CONTIGUOUS))
    assert r.dtype == tl.int8 and r.is_contiguous() and (N(r) == 7).all()
    r = call(lib.tl_ops_empty_like(a._h, U, NONE, lib.TL_META, False, False, NONE))
    assert r.device.type == "meta" and r.shape == (4, 3)
    s = call(lib.tl_ops_slice_Tensor(T(x)._h, 1, 0, False, 0, False, 2))  # not dense: contiguous result
    r = call(lib.tl_ops_zeros_like(s._h, U, NONE, NONE, False, False, NONE))
    assert r.is_contiguous() and r.shape == (3, 2)


# -------------------------------------------------------------------- copies

def test_copy_clone_contiguous_fill_zero():
    x = rng.standard_normal((3, 4)).astype(np.float32)
    a = T(x)
    at = call(lib.tl_ops_t(a._h))
    c = call(lib.tl_ops_clone(at._h, NONE))
    assert c.stride() == at.stride() and not lib.tl_tensor_is_alias_of(c._h, a._h)
    c2 = call(lib.tl_ops_clone(at._h, CONTIGUOUS))
    assert c2.is_contiguous()
    np.testing.assert_array_equal(N(c2), x.T)
    cc = call(lib.tl_ops_contiguous(at._h, CONTIGUOUS))
    assert cc.is_contiguous()
    np.testing.assert_array_equal(N(cc), x.T)
    same = lib.tl_ops_contiguous(a._h, CONTIGUOUS)
    assert same == a._h  # already contiguous: self itself
    call(same)
    err(lambda: call(lib.tl_ops_contiguous(a._h, PRESERVE)), RuntimeError, "preserve memory format is unsupported")
    dst = T(np.zeros((2, 3, 4), np.int32))
    r = lib.tl_ops_copy_(dst._h, a._h, False)  # broadcast + cast
    assert r == dst._h
    call(r)
    np.testing.assert_array_equal(N(dst), np.broadcast_to(x.astype(np.int32), (2, 3, 4)))
    v0 = dst._version
    call(lib.tl_ops_fill__Scalar(dst._h, sc(3)))
    assert (N(dst) == 3).all() and dst._version > v0
    call(lib.tl_ops_zero_(dst._h))
    assert (N(dst) == 0).all()
    m = call(lib.tl_ops_empty_memory_format(*ints([3, 4]), U, NONE, lib.TL_META, False, False, NONE))
    err(lambda: call(lib.tl_ops_copy_(dst._h, m._h, False)), NotImplementedError, "Cannot copy out of meta tensor; no data!")
    call(lib.tl_ops_fill__Scalar(m._h, sc(1)))  # meta: nothing to write


def test_to_and_to_copy():
    x = rng.standard_normal((2, 3)).astype(np.float32)
    a = T(x)
    same = lib.tl_ops_to_dtype(a._h, lib.TL_FLOAT32, False, False, NONE)
    assert same == a._h  # nothing to do: self itself, like PyTorch
    call(same)
    cp = call(lib.tl_ops_to_dtype(a._h, lib.TL_FLOAT32, False, True, NONE))
    assert not lib.tl_tensor_is_alias_of(cp._h, a._h)
    d = call(lib.tl_ops_to_dtype(a._h, lib.TL_FLOAT64, False, False, NONE))
    assert d.dtype == tl.float64
    np.testing.assert_array_equal(N(d), x.astype(np.float64))
    i = call(lib.tl_ops_to_other(a._h, T(np.zeros(1, np.int64))._h, False, False, NONE))
    assert i.dtype == tl.int64
    np.testing.assert_array_equal(N(i), x.astype(np.int64))
    m = call(lib.tl_ops_to_device(a._h, lib.TL_META, lib.TL_FLOAT16, False, False, NONE))
    assert m.device.type == "meta" and m.dtype == tl.float16 and m.shape == (2, 3)
    m2 = call(lib.tl_ops_to_dtype_layout(a._h, U, NONE, lib.TL_META, False, False, False, False, NONE))
    assert m2.device.type == "meta" and m2.dtype == tl.float32
    err(lambda: call(lib.tl_ops__to_copy(m._h, U, NONE, lib.TL_CPU, False, False, False, NONE)), NotImplementedError,
        "Cannot copy out of meta tensor")
    t = call(lib.tl_ops__to_copy(call(lib.tl_ops_t(a._h))._h, lib.TL_INT32, NONE, NONE, False, False, False, NONE))
    assert t.dtype == tl.int32 and t.stride() == (1, 3)


# ------------------------------------------------------- structured glue, Meta

def meta(shape, dtype=lib.TL_FLOAT32):
    p, n = ints(shape)
    return call(lib.tl_ops_empty_memory_format(p, n, dtype, NONE, lib.TL_META, False, False, NONE))


def test_structured_meta_kernels():
    a, b = meta([4, 1, 3]), meta([2, 1], lib.TL_INT64)
    r = call(lib.tl_ops_add_Tensor(a._h, b._h, sc(1)))
    assert r.device.type == "meta" and r.shape == (4, 2, 3) and r.dtype == tl.float32 and r.stride() == (6, 3, 1)
    r = call(lib.tl_ops_mul_Tensor(b._h, b._h))
    assert r.dtype == tl.int64 and r.shape == (2, 1)
    # transposed inputs: the output follows their layout
    at = call(lib.tl_ops_t(meta([3, 5])._h))
    r = call(lib.tl_ops_add_Tensor(at._h, at._h, sc(1)))
    assert r.shape == (5, 3) and r.stride() == (1, 5)
    # out= on meta resizes (with PyTorch's warning when it had elements)
    out = meta([0])
    assert lib.tl_ops_add_out(a._h, b._h, sc(1), out._h) == out._h
    assert out.shape == (4, 2, 3)
    # inplace: broadcast shape must equal self's
    err(lambda: call(lib.tl_ops_add__Tensor(meta([2, 3])._h, meta([4, 2, 3])._h, sc(1))), RuntimeError,
        r"output with shape \[2, 3\] doesn't match the broadcast shape \[4, 2, 3\]")
    # a CPU 0-dim tensor mixes with meta tensors
    r = call(lib.tl_ops_add_Tensor(a._h, T(np.array(2.0))._h, sc(1)))
    assert r.device.type == "meta" and r.shape == (4, 1, 3)


def test_structured_cpu_out_and_inplace():
    x = rng.standard_normal((2, 3)).astype(np.float32)
    y = rng.standard_normal((3,)).astype(np.float32)
    a, b = T(x), T(y)
    out = call(lib.tl_ops_zeros(*ints([1]), U, NONE, NONE, False, False))  # resizable (numpy memory is not)
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        r = lib.tl_ops_add_out(a._h, b._h, sc(2), out._h)
        assert r == out._h
        call(r)  # _wrap raises the warning this unwrapped entry point left pending
    assert ["An output with one or more elements was resized" in str(w.message) for w in ws] == [True]
    assert lib.tl_has_warning() == 0
    np.testing.assert_allclose(N(out), x + 2 * y, rtol=1e-6)
    v0 = a._version
    call(lib.tl_ops_add__Tensor(a._h, b._h, sc(1)))
    assert a._version == v0 + 1
    np.testing.assert_allclose(N(a), x + y, rtol=1e-6)
    ia = T(np.ones((2, 3), np.int64))
    err(lambda: call(lib.tl_ops_add__Tensor(ia._h, b._h, sc(1))), RuntimeError,
        "result type Float can't be cast to the desired output type Long")


def test_dispatch_table_of_add_shows_structured_glue():
    buf = ffi.new("char[8192]")
    lib.tl_dispatch_dump_table(b"aten::add.Tensor", buf, 8192)
    text = ffi.string(buf).decode()
    assert "CPU: tl_structured_add_Tensor_CPU registered at generated/csrc/ops_add.c [kernel]" in text
    assert "Meta: tl_structured_add_Tensor_Meta registered at generated/csrc/ops_add.c [kernel]" in text
    lib.tl_dispatch_dump_table(b"aten::reshape", buf, 8192)
    assert "CPU: tl_native_reshape registered at generated/csrc/ops_reshape.c [math kernel]" in ffi.string(buf).decode()


def test_no_kernel_is_missing():
    buf = ffi.new("char[8192]")
    n = lib.tl_ops_missing_kernels(buf, 8192)
    assert n == 0, ffi.string(buf).decode()


# ------------------------------------------------------------- boxed calling

def test_boxed_call_agrees_with_unboxed():
    x = rng.standard_normal((2, 3)).astype(np.float32)
    a = T(x)
    op = lib.tl_op_find(b"aten::slice.Tensor")
    st = ffi.new("tl_stack *")
    lib.tl_stack_init(st)
    try:
        assert lib.tl_stack_push_tensor(st, a._h) == 0
        assert lib.tl_stack_push_int(st, 1) == 0
        assert lib.tl_stack_push_none(st) == 0
        assert lib.tl_stack_push_int(st, 3) == 0
        assert lib.tl_stack_push_int(st, 2) == 0
        assert lib.tl_op_call_boxed(op, st) == 0, ffi.string(lib.tl_error_message())
        assert lib.tl_stack_size(st) == 1
        out = ffi.new("tl_tensor **")
        assert lib.tl_stack_pop_tensor(st, out) == 0
        np.testing.assert_array_equal(N(call(out[0])), x[:, :3:2])
        # a factory with optionals and a device, boxed
        op = lib.tl_op_find(b"aten::full")
        p = ffi.new("int64_t[]", [2, 2])
        assert lib.tl_stack_push_int_list(st, p, 2) == 0
        assert lib.tl_stack_push_scalar(st, sc(1.5)) == 0
        assert lib.tl_stack_push_dtype(st, lib.TL_FLOAT64) == 0
        assert lib.tl_stack_push_none(st) == 0
        assert lib.tl_stack_push_device(st, lib.TL_META, -1) == 0
        assert lib.tl_stack_push_none(st) == 0
        assert lib.tl_op_call_boxed(op, st) == 0, ffi.string(lib.tl_error_message())
        assert lib.tl_stack_pop_tensor(st, out) == 0
        t = call(out[0])
        assert t.device.type == "meta" and t.dtype == tl.float64 and t.shape == (2, 2)
        # a type mismatch is a TypeError, not a crash
        assert lib.tl_stack_push_int(st, 1) == 0
        assert lib.tl_stack_push_int(st, 1) == 0
        op = lib.tl_op_find(b"aten::t")
        assert lib.tl_op_call_boxed(op, st) == -1
        assert "Expected Tensor but got Int" in ffi.string(lib.tl_error_message()).decode()
        lib.tl_clear_error()
    finally:
        lib.tl_stack_free(st)


def test_slice_and_select_backward():
    g = T(np.arange(6, dtype=np.float32).reshape(2, 3))
    p, n = ints([2, 7])
    r = call(lib.tl_ops_slice_backward(g._h, p, n, 1, 1, 7, 2))
    want = np.zeros((2, 7), np.float32)
    want[:, 1:7:2] = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(N(r), want)
    g1 = T(np.arange(3, dtype=np.float64))
    p, n = ints([4, 3])
    r = call(lib.tl_ops_select_backward(g1._h, p, n, 0, -1))
    want = np.zeros((4, 3))
    want[-1] = np.arange(3)
    np.testing.assert_array_equal(N(r), want)
    assert r.dtype == tl.float64


needs_torch = pytest.mark.skipif(torch is None, reason="torch not installed")

TL_DT = {"float32": lib.TL_FLOAT32, "int64": lib.TL_INT64, "float64": lib.TL_FLOAT64, "int32": lib.TL_INT32}


@needs_torch
@pytest.mark.parametrize(
    "sa, sb, transpose_a, da, db",
    [
        ((4, 1, 3), (2, 1), False, "float32", "int64"),
        ((5, 3), (3, 5), True, "float32", "float32"),
        ((3, 5), (3,), True, "int32", "float64"),
        ((), (2, 3), False, "int64", "float32"),
        ((0, 3), (1, 3), False, "float32", "float32"),
    ],
)
def test_meta_add_matches_torch_meta(sa, sb, transpose_a, da, db):
    a, b = meta(list(sa), TL_DT[da]), meta(list(sb), TL_DT[db])
    ta = torch.empty(sa, dtype=getattr(torch, da), device="meta")
    tb = torch.empty(sb, dtype=getattr(torch, db), device="meta")
    if transpose_a:
        a, ta = call(lib.tl_ops_t(a._h)), ta.t()
    r, tr = call(lib.tl_ops_add_Tensor(a._h, b._h, sc(1))), ta + tb
    assert r.shape == tuple(tr.shape) and r.stride() == tr.stride() and str(r.dtype).split(".")[-1] == str(tr.dtype).split(".")[-1]


@needs_torch
def test_factory_dtypes_match_torch():
    for v in (True, 3, 2.5):
        f = call(lib.tl_ops_full(*ints([2]), sc(v), U, NONE, NONE, False, False))
        assert str(f.dtype).split(".")[-1] == str(torch.full((2,), v).dtype).split(".")[-1]
    for args in [(5,), (1.0, 4), (0, 5, 2), (0, 1, 0.25)]:
        t = tl.arange(*args) if hasattr(tl, "arange") else None
        if t is not None:
            assert str(t.dtype).split(".")[-1] == str(torch.arange(*args).dtype).split(".")[-1]
            np.testing.assert_allclose(N(t), torch.arange(*args).numpy())


def test_boxing_wrapper_runs_python_kernels_from_c():
    """An unboxed C call whose kernel is a boxed Python function goes through
    the generated boxing wrapper: arguments arrive in schema order, optionals
    as None, and the returned tensor comes back to C."""
    from torchlet.library import Library

    seen = []
    x = T(np.arange(10, dtype=np.float32))

    def my_slice(self, dim, start, end, step):
        seen.append(("slice", dim, start, end, step))
        return call(lib.tl_alias(self._h if hasattr(self, "_h") else self._p))

    def my_full(size, fill_value, dtype, layout, device, pin_memory):
        seen.append(("full", size, fill_value, dtype, layout, device, pin_memory))
        return T(np.full(size, 7, np.float32))

    lib_ = Library("aten", "IMPL")
    try:
        lib_.impl("slice.Tensor", my_slice, "CPU")
        lib_.impl("full", my_full, "CPU")
        r = call(lib.tl_ops_slice_Tensor(x._h, 0, 0, False, 5, True, 2))
        assert r.shape == (10,)
        r = call(lib.tl_ops_full(*ints([2, 3]), sc(1.5), lib.TL_FLOAT64, NONE, NONE, False, False))
        assert (N(r) == 7).all() and r.shape == (2, 3)
        assert seen[0] == ("slice", 0, None, 5, 2)
        assert seen[1][:3] == ("full", [2, 3], 1.5) and seen[1][4:] == (None, None, None)
        assert str(seen[1][3]).endswith("float64")
    finally:
        lib_._destroy()
    # the generated kernels are back
    r = call(lib.tl_ops_slice_Tensor(x._h, 0, 0, False, 5, True, 2))
    np.testing.assert_array_equal(N(r), np.arange(10, dtype=np.float32)[:5:2])


@pytest.mark.parametrize("method,sizes", [
    ("view", (6,)), ("view", (2, 3)), ("view", (3, -1)), ("view", (1, 2, 3)),
    ("reshape", (3, 2)), ("reshape", (-1,)), ("permute", (1, 0)),
    ("repeat", (2, 1)), ("tile", (2,)), ("flip", (0,)), ("broadcast_to", (4, 2, 3)),
])
def test_int_size_fast_path_matches_tuple_form(method, sizes):
    """x.view(2, 3) goes straight to C with a cached int64 array; x.view((2, 3))
    takes the general conversion. Both, and a repeat of the first (a cache
    hit), give numpy's result."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    a = tl.from_numpy(x.copy())
    ref = {"view": lambda s: x.reshape(s), "reshape": lambda s: x.reshape(s),
           "permute": lambda s: x.transpose(s), "repeat": lambda s: np.tile(x, s),
           "tile": lambda s: np.tile(x, s), "flip": lambda s: np.flip(x, s),
           "broadcast_to": lambda s: np.broadcast_to(x, s)}[method](sizes)
    for _ in range(2):
        np.testing.assert_array_equal(getattr(a, method)(*sizes).numpy(), ref)
    np.testing.assert_array_equal(getattr(a, method)(sizes).numpy(), ref)


@pytest.mark.parametrize("sizes", [(2, 3.0), (True, 6), (6.0,), (2, np.float64(3))])
def test_int_size_fast_path_rejects_non_ints_after_a_cached_call(sizes):
    """(2, 3.0) equals and hashes like the cached (2, 3): the fast path checks
    every element's class so these still raise PyTorch's TypeError."""
    a = tl.zeros(6)
    a.view(2, 3), a.view(6), a.view(1, 6), a.view(2, 1, 3)  # populate the cache
    with pytest.raises(TypeError):
        a.view(*sizes)
    with pytest.raises(TypeError):
        a.reshape(*sizes)
