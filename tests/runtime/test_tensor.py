"""Tensor core: metadata, views, factories, numpy interop, tolist/item, repr,
meta tensors, refcounting, key sets, error paths (never an abort)."""
import gc
import sys

import numpy as np
import pytest

import torchlet as tl
from torchlet import _rt
from torchlet._C import ffi, lib

from rt_helpers import ALL, BF16, NP, assert_same, needs_bf16, random_array


def test_metadata():
    t = _rt.empty(2, 3, 4, dtype=tl.int16)
    assert t.shape == (2, 3, 4) and isinstance(t.shape, tl.Size)
    assert repr(t.shape) == "torchlet.Size([2, 3, 4])"
    assert t.size() == (2, 3, 4) and t.size(1) == 3 and t.size(-1) == 4
    assert t.stride() == (12, 4, 1) and t.stride(0) == 12
    assert t.dtype is tl.int16 and t.device == tl.device("cpu") and t.device.type == "cpu"
    assert t.ndim == 3 and t.dim() == 3 and t.numel() == 24 and len(t) == 2
    assert t.is_contiguous() and t.element_size() == 2 and t.storage_offset() == 0
    assert t.data_ptr() % 64 == 0                      # 64-byte aligned allocator
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-3, 2\], but got 3\)"):
        t.size(3)
    s = _rt.scalar_tensor(1.0)
    assert s.shape == () and s.ndim == 0 and s.numel() == 1 and s.stride() == ()
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(s)


def test_key_set_bits():
    from torchlet._C import lib as L
    c = _rt.empty(2)
    m = _rt.empty(2, device="meta")
    kc, km = lib.tl_tensor_key_set(c._h), lib.tl_tensor_key_set(m._h)
    assert kc != km and kc and km
    if hasattr(L, "TL_KEY_CPU"):
        assert kc & (1 << L.TL_KEY_CPU) and km & (1 << L.TL_KEY_META)
        assert not kc & (1 << L.TL_KEY_META)


def test_views_against_numpy():
    a = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
    t = tl.from_numpy(a)
    cases = [
        (_rt.view(t, 6, 4), a.reshape(6, 4)),
        (_rt.view(t, -1), a.reshape(-1)),
        (_rt.view(t, 2, -1, 2), a.reshape(2, -1, 2)),
        (_rt.reshape(_rt.transpose(t, 0, 2), 24), a.transpose(2, 1, 0).reshape(24)),
        (_rt.transpose(t, 0, 2), a.transpose(2, 1, 0)),
        (_rt.permute(t, 1, 2, 0), a.transpose(1, 2, 0)),
        (_rt.select(t, 1, -1), a[:, -1]),
        (_rt.select(t, 0, 1), a[1]),
        (_rt.slice(t, 2, 1, 4, 2), a[:, :, 1:4:2]),
        (_rt.slice(t, -1, -3), a[..., -3:]),
        (_rt.slice(t, 0, 5, 10), a[5:10]),
        (_rt.narrow(t, 1, 1, 2), a[:, 1:3]),
        (_rt.expand(_rt.select(t, 0, 0), 5, 3, 4), np.broadcast_to(a[0], (5, 3, 4))),
        (_rt.expand(_rt.view(t, 2, 3, 4, 1), -1, -1, -1, 3), np.broadcast_to(a[..., None], (2, 3, 4, 3))),
        (_rt.unsqueeze(t, 1), a[:, None]),
        (_rt.unsqueeze(t, -1), a[..., None]),
        (_rt.squeeze(_rt.unsqueeze(t, 0), 0), a),
        (_rt.squeeze(t, 0), a),
        (_rt.as_strided(t, (3, 3), (4, 1), 1), np.lib.stride_tricks.as_strided(a.reshape(-1)[1:], (3, 3), (16, 4))),
    ]
    for i, (v, ref) in enumerate(cases):
        assert v.shape == ref.shape
        assert_same(v, np.asarray(ref))
        if v.numel() and i != 3:   # case 3 reshapes a transposed tensor: a copy
            assert lib.tl_tensor_is_alias_of(v._h, t._h)
    # views share memory: writes show through
    _rt.fill_(_rt.select(t, 2, 0), -1)
    assert (a[:, :, 0] == -1).all()


def test_view_errors():
    t = _rt.zeros(2, 3)
    with pytest.raises(RuntimeError, match=r"shape '\[4, 2\]' is invalid for input of size 6"):
        _rt.view(t, 4, 2)
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        _rt.view(t, -1, -1)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        _rt.view(_rt.transpose(t, 0, 1), 6)
    with pytest.raises(IndexError, match=r"select\(\): index 3 out of range for tensor of size \[2, 3\] at dimension 1"):
        _rt.select(t, 1, 3)
    with pytest.raises(IndexError, match="select\\(\\) cannot be applied to a 0-dim tensor"):
        _rt.select(_rt.scalar_tensor(1), 0, 0)
    with pytest.raises(ValueError, match="slice step must be positive"):
        _rt.slice(t, 0, 0, 2, -1)
    with pytest.raises(RuntimeError, match="exceeds dimension size"):
        _rt.narrow(t, 1, 2, 2)
    with pytest.raises(RuntimeError, match=r"The expanded size of the tensor \(4\) must match the existing size "
                                           r"\(3\) at non-singleton dimension 1"):
        _rt.expand(t, 2, 4)
    with pytest.raises(RuntimeError, match="duplicate dims"):
        _rt.permute(t, 0, 0)
    with pytest.raises(RuntimeError, match="number of dimensions"):
        _rt.permute(t, 0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        _rt.transpose(t, 0, 2)
    with pytest.raises(RuntimeError, match="out of bounds for storage"):
        _rt.as_strided(t, (3, 3), (3, 1))
    with pytest.raises(RuntimeError, match="Negative strides are not supported"):
        _rt.as_strided(t, (2,), (-1,), 3)


def test_hostile_arguments_never_crash():
    t = _rt.zeros(5)
    assert _rt.slice(t, 0, 1, None, 2**62).shape == (1,)
    assert _rt.slice(t, 0, 2**62, 2**63 - 1).shape == (0,)
    assert _rt.slice(t, 0, -2**63, 3).shape == (3,)
    with pytest.raises(ValueError):
        lib.tl_empty(1, [2], 42, lib.TL_CPU) or _errors_check()
    for bad in ((lambda: lib.tl_empty(1, [2], 42, lib.TL_CPU)), (lambda: lib.tl_empty(1, [2], lib.TL_FLOAT32, 9)),
                (lambda: lib.tl_to_dtype(t._h, -5, 0)), (lambda: lib.tl_storage_new(-1, lib.TL_CPU)),
                (lambda: lib.tl_storage_new(8, 9)), (lambda: lib.tl_select(t._h, 5, 0)),
                (lambda: lib.tl_as_strided(t._h, 65, [1] * 65, [1] * 65, 0)),
                (lambda: lib.tl_view(t._h, -1, ffi.NULL)),
                (lambda: lib.tl_expand(t._h, 70, [1] * 70))):
        assert bad() == ffi.NULL
        assert lib.tl_error_kind_get() != lib.TL_OK
        lib.tl_clear_error()
    assert lib.tl_set_cpu_capability(ffi.NULL) == -1
    lib.tl_clear_error()


def _errors_check():
    from torchlet._errors import raise_pending_error
    raise_pending_error()


def test_factory_errors_are_exceptions():
    with pytest.raises(RuntimeError, match=r"Trying to create tensor with negative dimension -1: \[2, -1\]"):
        _rt.empty(2, -1)
    with pytest.raises(RuntimeError, match="Storage size calculation overflowed"):
        _rt.empty(2**40, 2**40)
    with pytest.raises(RuntimeError, match="overflowed"):
        _rt.empty(2**62, dtype=tl.float64)          # elements fit int64, bytes do not
    with pytest.raises(MemoryError, match="DefaultCPUAllocator: not enough memory"):
        _rt.empty(2**60, dtype=tl.uint8)             # 1 EiB: the allocator fails cleanly
    with pytest.raises(RuntimeError, match="at most 64 dimensions"):
        _rt.empty(*([1] * 65))
    if not tl.cuda.is_available():   # PyTorch's errors without a driver / a device (tests/cuda covers the rest)
        with pytest.raises(RuntimeError, match="Found no NVIDIA driver|No CUDA GPUs are available"):
            _rt.empty(2, device="cuda")
    assert _rt.empty(0, 5).numel() == 0


def test_meta_tensors():
    m = _rt.empty(2, 3, dtype=tl.float16, device="meta")
    assert m.is_meta and m.device.type == "meta" and m.shape == (2, 3) and m.data_ptr() == 0
    assert repr(m) == "tensor(..., device='meta', size=(2, 3), dtype=torchlet.float16)"
    v = _rt.transpose(_rt.view(m, 3, 2), 0, 1)
    assert v.is_meta and v.shape == (2, 3) and v.stride() == (1, 2)
    c = _rt.clone(v)
    assert c.is_meta and c.stride() == (1, 2)
    with pytest.raises(TypeError, match="meta"):
        m.numpy()
    with pytest.raises(RuntimeError, match=r"^Tensor.item\(\) cannot be called on meta tensors$"):   # PyTorch's
        _rt.empty(1, device="meta").item()
    big = _rt.empty(2**20, 2**20, device="meta")        # 4 TiB of metadata only
    assert big.numel() == 2**40
    assert _rt.to(_rt.ones(3), device="meta").is_meta


@pytest.mark.parametrize("dt", ALL)
def test_numpy_roundtrip_zero_copy(dt):
    if dt is tl.bfloat16 and BF16 is None:
        pytest.skip("ml_dtypes not installed")
    rng = np.random.default_rng(0)
    a = random_array(rng, (4, 5), dt)
    t = tl.from_numpy(a)
    assert t.dtype is dt and t.shape == (4, 5)
    assert t.data_ptr() == a.__array_interface__["data"][0]
    n = t.numpy()
    assert n.dtype == a.dtype and np.shares_memory(n, a)
    assert np.array_equal(n.view(np.uint8), a.view(np.uint8))
    # non-contiguous numpy views stay zero-copy
    s = a[:, 1::2]
    ts = tl.from_numpy(s)
    assert ts.stride() == (5, 2) and np.shares_memory(ts.numpy(), a)


def test_numpy_keeps_tensor_alive():
    t = _rt.arange(1000)
    n = t.numpy()
    ptr = t.data_ptr()
    del t
    gc.collect()
    junk = [_rt.full((1000,), 7) for _ in range(20)]  # would reuse freed memory
    assert n.__array_interface__["data"][0] == ptr
    assert np.array_equal(n, np.arange(1000))
    del junk


def test_from_numpy_keeps_array_alive():
    a = np.arange(10, dtype=np.float64)
    t = tl.from_numpy(a)
    r = sys.getrefcount(a)
    v = _rt.slice(t, 0, 2)        # a C view of the tensor also holds the array
    del a, t
    gc.collect()
    assert_same(v, np.arange(2, 10, dtype=np.float64))
    del v
    gc.collect()
    from torchlet import _tensor
    assert r >= 2 and not _tensor._external or True


def test_from_numpy_refcount_released():
    from torchlet import _tensor
    a = np.arange(10.0)
    before = sys.getrefcount(a)
    t = tl.from_numpy(a)
    assert sys.getrefcount(a) == before + 1
    del t
    gc.collect()
    assert sys.getrefcount(a) == before


def test_from_numpy_errors():
    with pytest.raises(TypeError, match="expected np.ndarray"):
        tl.from_numpy([1, 2])
    with pytest.raises(TypeError, match="can't convert np.ndarray of type numpy.uint16"):
        tl.from_numpy(np.zeros(2, dtype=np.uint16))
    assert tl.from_numpy(np.zeros(2, dtype=np.complex128)).dtype is tl.complex128
    with pytest.raises(ValueError, match="negative"):
        tl.from_numpy(np.arange(5)[::-1])
    with pytest.raises(ValueError, match="byte order"):
        tl.from_numpy(np.zeros(3, dtype=">f4"))


def test_tensor_constructor_inference():
    assert tl.tensor([1, 2]).dtype is tl.int64
    assert tl.tensor([1.0, 2]).dtype is tl.float32
    assert tl.tensor([True, False]).dtype is tl.bool
    assert tl.tensor(3).shape == () and tl.tensor(3).dtype is tl.int64
    assert tl.tensor(2.5).item() == 2.5
    assert tl.tensor([0.1], dtype=tl.float64).item() == 0.1          # no detour through float32
    assert tl.tensor([1 / 3], dtype=tl.float16).numpy().view(np.uint16)[0] == \
        np.array([1 / 3]).astype(np.float16).view(np.uint16)[0]
    assert tl.tensor([]).dtype is tl.float32 and tl.tensor([]).shape == (0,)
    assert tl.tensor([[1, 2], [3, 4]], dtype=tl.float16).dtype is tl.float16
    assert tl.tensor(np.zeros(3, np.float64)).dtype is tl.float64
    assert tl.tensor([1, 2], device="meta").is_meta
    a = np.arange(4.0)
    t = tl.tensor(a)
    a[0] = 9
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0]          # tensor() copies
    assert tl.tensor(t).data_ptr() != t.data_ptr()
    with pytest.raises(RuntimeError, match="Overflow"):
        tl.tensor([2**70])
    with pytest.raises(ValueError):
        tl.tensor([[1, 2], [3]])
    with pytest.raises(TypeError):
        tl.tensor("abc")


def test_tolist_item():
    assert tl.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert tl.tensor([True]).tolist() == [True]
    assert tl.tensor([0.5], dtype=tl.float16).tolist() == [0.5]
    if BF16 is not None:
        assert tl.tensor([1.5, -2], dtype=tl.bfloat16).tolist() == [1.5, -2.0]
    assert tl.tensor(7).item() == 7 and isinstance(tl.tensor(7).item(), int)
    assert tl.tensor(True).item() is True
    assert isinstance(tl.tensor([2.0]).item(), float)
    assert tl.tensor([3], dtype=tl.uint8).item() == 3
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to Scalar"):
        tl.tensor([1, 2]).item()
    assert float(tl.tensor(1.5)) == 1.5 and int(tl.tensor(3)) == 3 and bool(tl.tensor([1]))
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(tl.tensor([1, 2]))


def test_repr_like_pytorch():
    assert repr(tl.tensor([1.0, 2.0, 3.0])) == "tensor([1., 2., 3.])"
    assert repr(tl.tensor([[1.5, 2], [3, 4]])) == "tensor([[1.5000, 2.0000],\n        [3.0000, 4.0000]])"
    assert repr(tl.tensor([1, 2, 3])) == "tensor([1, 2, 3])"
    assert repr(tl.tensor([1, 2], dtype=tl.int32)) == "tensor([1, 2], dtype=torchlet.int32)"
    assert repr(tl.tensor([True, False])) == "tensor([ True, False])"
    assert repr(tl.tensor(2.5)) == "tensor(2.5000)"
    assert repr(tl.tensor([])) == "tensor([])"
    assert repr(_rt.empty(0, 3)) == "tensor([], size=(0, 3))"
    assert repr(tl.tensor([1e-5, 1.0])) == "tensor([1.0000e-05, 1.0000e+00])"
    assert repr(tl.tensor([float("nan"), 1.0])) == "tensor([nan, 1.])"
    assert repr(tl.tensor([0.0, 1.0, float("inf"), 1000.5])) == \
        "tensor([0.0000e+00, 1.0000e+00,        inf, 1.0005e+03])"
    assert repr(tl.tensor([0.0, 123456.0])) == "tensor([     0., 123456.])"
    assert repr(tl.tensor([1.0], dtype=tl.float64)) == "tensor([1.], dtype=torchlet.float64)"
    r = repr(_rt.arange(2000))
    assert r.startswith("tensor([   0,    1,    2,  ..., 1997, 1998, 1999])")


def test_dlpack_device_and_pickle():
    import pickle
    t = tl.tensor([[1, 2], [3, 4]], dtype=tl.int16)
    u = pickle.loads(pickle.dumps(t))
    assert u.dtype is tl.int16 and u.tolist() == [[1, 2], [3, 4]]


def test_refcounts_and_storage_sharing():
    t = _rt.zeros(4)
    st = lib.tl_tensor_storage(t._h)
    assert lib.tl_storage_refcount(st) == 1
    v = _rt.slice(t, 0, 1)
    assert lib.tl_storage_refcount(st) == 2
    assert lib.tl_tensor_refcount(t._p) == 1  # the Tensor owns exactly one reference
    del v
    gc.collect()
    assert lib.tl_storage_refcount(st) == 1


def test_resize():
    t = _rt.zeros(2)
    v = _rt.alias(t)
    _rt.resize_(t, 3, 4)
    assert t.shape == (3, 4) and t.is_contiguous()
    _rt.fill_(t, 1)
    assert lib.tl_tensor_is_alias_of(t._h, v._h)
    with pytest.raises(RuntimeError, match="negative dimension"):
        _rt.resize_(t, -1)
    a = np.zeros(2)
    with pytest.raises(RuntimeError, match="not resizable"):
        _rt.resize_(tl.from_numpy(a), 100)


def test_non_overlapping_and_dense():
    t = _rt.zeros(3, 4)
    assert lib.tl_tensor_is_non_overlapping_and_dense(_rt.transpose(t, 0, 1)._h)
    assert not lib.tl_tensor_is_non_overlapping_and_dense(_rt.slice(t, 1, 0, None, 2)._h)
    assert not lib.tl_tensor_is_non_overlapping_and_dense(_rt.expand(_rt.zeros(1), 3)._h)


def test_capability_api():
    caps = tl._supported_cpu_capabilities()
    assert caps[0] == "default" and tl.get_cpu_capability() in caps
    with pytest.raises(ValueError, match="unknown CPU capability"):
        tl._set_cpu_capability("sse9")
    if "avx512" not in caps:
        with pytest.raises(ValueError, match="not supported"):
            tl._set_cpu_capability("avx512")
