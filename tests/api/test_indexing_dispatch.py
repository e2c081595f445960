"""Indexing, dispatcher introspection from Python, Python kernels
(torchlet.library), boxed calls, error types."""
import numpy as np
import pytest

import torchlet as tl
from torchlet import library


@pytest.fixture
def x():
    return tl.arange(24.0).view(2, 3, 4)


N = np.arange(24.0).reshape(2, 3, 4)

INDICES = [0, -1, (1, 2), (slice(None), 1), (Ellipsis, 1), (None, 0, Ellipsis, slice(None, None, 2)),
           (slice(1, None), slice(None, None, 2), -1), Ellipsis, slice(None), (0, 1, 2), (slice(5, 9),),
           (slice(-2, None), None), (1, Ellipsis, None), (slice(0, 0),)]


@pytest.mark.parametrize("idx", INDICES, ids=repr)
def test_getitem_like_numpy(x, idx):
    got = x[idx]
    want = N[idx]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)


def test_getitem_is_a_view_and_zero_dim_tensor_index(x):
    v = x[1, ::2]
    assert v.data_ptr() != 0 and v._version == x._version
    v.fill_(-1.0)
    assert x[1, 0, 0].item() == -1.0 and x[1, 2, 3].item() == -1.0
    assert x[tl.tensor(1), 0].tolist() == x[1, 0].tolist()


def test_setitem(x):
    n = N.copy()
    x[0, 1] = 100.0
    n[0, 1] = 100.0
    x[1] = tl.ones(4)
    n[1] = 1
    x[..., ::3] = 7
    n[..., ::3] = 7
    np.testing.assert_array_equal(x.numpy(), n)


def test_index_errors(x):
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 2"):
        x[5]
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 3"):
        x[0, 0, 0, 0]
    with pytest.raises(ValueError, match="step must be greater than zero"):
        x[::-1]
    # an int is a basic index (select), as in PyTorch: x[1, :, [3]] is x[1][:, [3]]
    assert x[1, :, [3]].tolist() == x[1][:, 3:4].tolist()


def test_meta_indexing():
    m = tl.empty(4, 5, device="meta")
    assert m[1:, ::2].shape == (3, 3) and m[0].is_meta


def test_dispatch_keys_and_table():
    a = tl.ones(2)
    assert repr(tl._C._dispatch_keys(a)) == "DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)"
    assert repr(tl._C._dispatch_keys(tl.empty(2, device="meta"))) == "DispatchKeySet(Meta, ADInplaceOrView, AutogradMeta)"
    table = tl._C._dispatch_dump_table("aten::add.Tensor")
    lines = table.splitlines()
    assert any(ln.startswith("CPU: ") and ln.endswith("[kernel]") for ln in lines)
    assert any(ln.startswith("Meta: ") for ln in lines)
    assert any(ln.startswith("AutogradCPU: ") for ln in lines)            # autograd kernel or fallthrough
    assert "BackendSelect: fallthrough registered in torchlet runtime [backend fallback]" in lines
    with pytest.raises(RuntimeError, match="No such operator aten::nope"):
        tl._C._dispatch_dump(("aten::nope"))
    assert tl._C._dispatch_has_kernel_for_dispatch_key("aten::add.Tensor", "CPU")
    assert tl._C._dispatch_has_kernel_for_dispatch_key("aten::add.Tensor", "CUDA")   # the generated CUDA kernel
    assert not tl._C._dispatch_has_kernel_for_dispatch_key("aten::median", "CUDA")  # no CUDA kernel
    with pytest.raises(RuntimeError, match="could not parse dispatch key: Foo"):
        tl._C._dispatch_has_kernel_for_dispatch_key("aten::add.Tensor", "Foo")


def test_tls_exclude_from_python():
    assert not tl._C._dispatch_tls_is_dispatch_key_excluded("AutogradCPU")
    tl._C._dispatch_tls_set_dispatch_key_excluded("AutogradCPU", True)
    try:
        assert tl._C._dispatch_tls_is_dispatch_key_excluded("AutogradCPU")
        assert (tl.ones(1) + 1).item() == 2.0
    finally:
        tl._C._dispatch_tls_set_dispatch_key_excluded("AutogradCPU", False)
    assert "BackendSelect" in repr(tl._C._dispatch_tls_local_include_set())


def test_python_kernel_registered_for_cpu_is_called():
    a, b = tl.tensor([1.0, 2.0]), tl.tensor([3.0, 4.0])
    calls = []

    def my_add(self, other, alpha):
        calls.append((self.tolist(), other.tolist(), alpha))
        return tl.tensor([42.0])

    lib_ = library.Library("aten", "IMPL")
    lib_.impl("add.Tensor", my_add, "CPU")
    try:
        assert (a + b).tolist() == [42.0]
        assert tl.add(a, b, alpha=3).tolist() == [42.0]
        assert calls == [([1.0, 2.0], [3.0, 4.0], 1), ([1.0, 2.0], [3.0, 4.0], 3)]
        assert "CPU: my_add (Python kernel) [kernel]" in tl._C._dispatch_dump_table("aten::add.Tensor")
        # meta tensors still reach the generated Meta kernel
        assert (tl.empty(2, device="meta") + tl.empty(2, device="meta")).is_meta
    finally:
        lib_._destroy()
    assert (a + b).tolist() == [4.0, 6.0]             # the generated kernel is back


def test_python_kernel_exception_types():
    a = tl.tensor([1.0])
    lib_ = library.Library("aten", "IMPL")

    def bad(self, other, alpha):
        raise ValueError("my kernel refuses")

    lib_.impl("add.Tensor", bad, "CPU")
    try:
        with pytest.raises(ValueError, match="my kernel refuses"):
            a + a
    finally:
        lib_._destroy()


def test_define_custom_op_boxed_call_and_missing_kernel():
    lib_ = library.Library("tltest", "DEF")
    lib_.define("twice(Tensor x, *, Scalar k=2) -> Tensor")
    lib_.impl("twice", lambda x, k: x * k, "CPU")
    try:
        assert library.call("tltest::twice", tl.tensor([1.0, 2.0]), 3).tolist() == [3.0, 6.0]
        with pytest.raises(NotImplementedError,
                           match="tltest::twice: attempted to run this operator with Meta tensors, but there was no fake "
                                 "impl or Meta kernel registered"):
            library.call("tltest::twice", tl.empty(2, device="meta"), 2)
    finally:
        lib_._destroy()


def test_boxed_and_unboxed_agree():
    a, b = tl.tensor([1.0, 2.0]), tl.tensor([[3.0], [4.0]])
    assert library.call("aten::add.Tensor", a, b, 2).tolist() == tl.add(a, b, alpha=2).tolist()
    assert library.call("aten::mul.Tensor", a, b).tolist() == (a * b).tolist()


def test_backend_fallback_from_python():
    """A Python fallback at PrivateUse1 serves every operator once the key is
    in the thread-local include set (above CPU, so it runs first)."""
    seen = []
    seven = tl.tensor([7.0])
    lib_ = library.Library("_", "IMPL")

    def fallback(op_name, *args):
        seen.append((op_name, len(args)))
        return seven

    lib_.fallback(fallback, "PrivateUse1")
    try:
        assert "PrivateUse1: fallback (Python fallback) [backend fallback]" in \
            tl._C._dispatch_dump_table("aten::add.Tensor")
        a = tl.ones(1)
        tl._C._dispatch_tls_set_dispatch_key_included("PrivateUse1", True)
        try:
            r1 = a + a
            r2 = a * a
        finally:
            tl._C._dispatch_tls_set_dispatch_key_included("PrivateUse1", False)
        assert r1.tolist() == [7.0] and r2.tolist() == [7.0]
        assert seen == [("aten::add.Tensor", 3), ("aten::mul.Tensor", 2)]
    finally:
        lib_._destroy()
    assert (tl.ones(1) + 1).tolist() == [2.0]


def test_errors_map_to_exception_types():
    a = tl.ones(2, 3)
    with pytest.raises(RuntimeError, match="must match the size"):
        a + tl.ones(4)
    with pytest.raises(RuntimeError):
        tl.mm(a, a)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        a + tl.empty(2, 3, device="meta")
    with pytest.raises(IndexError):
        a.select(5, 0)


def test_zero_dim_index_error():
    with pytest.raises(IndexError, match="invalid index of a 0-dim tensor"):
        tl.tensor(1.0)[0]
    assert tl.arange(3)[-1].item() == 2


ADV = [[1, 0], (slice(None), [2, 0, 2]), (Ellipsis, [[0, 1], [3, 3]]), "mask", (0, "mask0"),
       (slice(None), np.array([True, False, True])), ([-1],), (1, [0, 2]), ([1], slice(1, None))]


@pytest.mark.parametrize("idx", ADV, ids=repr)
def test_advanced_getitem_like_numpy(idx):
    n = np.arange(24.0).reshape(2, 3, 4)
    special = {"mask": n > 10, "mask0": n[0] > 5}
    np_idx = tuple(special.get(e, e) if isinstance(e, str) else e for e in idx) if isinstance(idx, tuple) \
        else special.get(idx, idx) if isinstance(idx, str) else idx
    conv = lambda e: tl.tensor(e) if isinstance(e, np.ndarray) else e  # noqa: E731
    tl_idx = tuple(conv(e) for e in np_idx) if isinstance(np_idx, tuple) else conv(np_idx)
    got = tl.tensor(n)[tl_idx]
    want = n[np_idx]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)


def test_advanced_setitem_meta_and_errors():
    n = np.arange(12.0).reshape(3, 4)
    x = tl.tensor(n)
    x[tl.tensor(n > 6)] = 0.0
    n[n > 6] = 0.0
    x[:, [0, 2]] = tl.tensor([7.0, 8.0, 9.0], dtype=tl.float64)[:, None]   # index_put_: same dtype (PyTorch)
    n[:, [0, 2]] = np.array([7.0, 8.0, 9.0])[:, None]
    np.testing.assert_array_equal(x.numpy(), n)
    m = tl.empty(3, 4, device="meta")
    assert m[tl.tensor([0, 2])].shape == (2, 4) and m[:, [1, 1, 1]].is_meta
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 3"):
        x[[5]]
    assert x[[0], [1]].tolist() == [n[0, 1]]      # several advanced indices (index.Tensor)
    with pytest.raises(IndexError, match="tensors used as indices must be long"):
        x[tl.tensor([0.5])]
