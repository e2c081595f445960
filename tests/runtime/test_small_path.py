"""The small-tensor shortcuts of the runtime (docs/RUNTIME.md): TensorIterator's
quick build must decide what the general stages decide, borrowed operands and
taken outputs must keep reference counts right, and the per-thread spare
blocks must survive tensors freed on another thread."""
import threading

import numpy as np
import pytest

import torchlet as tl
from torchlet._C import lib


@pytest.mark.parametrize("shape", [(), (1,), (3,), (2, 3), (2, 1, 4)])
@pytest.mark.parametrize("dt", [tl.float32, tl.float64, tl.int32, tl.bool])
def test_quick_build_matches_numpy(shape, dt):
    a = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    b = (a * 2 + 1)
    ta, tb = tl.tensor(a.tolist(), dtype=dt), tl.tensor(b.tolist(), dtype=dt)
    r = ta * tb
    assert r.dtype == dt and tuple(r.shape) == shape and r.is_contiguous()
    npdt = {tl.float32: np.float32, tl.float64: np.float64, tl.int32: np.int32, tl.bool: np.bool_}[dt]
    np.testing.assert_array_equal(np.asarray(r.numpy()), (a.astype(npdt) * b.astype(npdt)))


def test_int_true_division_and_mixed_dtypes_take_the_general_path():
    a = tl.tensor([1, 2, 4], dtype=tl.int32)
    assert (a / a).dtype == tl.float32
    r = a + tl.tensor([0.5, 0.5, 0.5])            # int input cast to float (borrowed input replaced)
    assert r.dtype == tl.float32 and r.tolist() == [1.5, 2.5, 4.5]
    z = tl.tensor(3, dtype=tl.int64) + tl.tensor([1.0])   # 0-dim int with a 1-dim float
    assert z.dtype == tl.float32 and z.tolist() == [4.0]


def test_refcounts_of_borrowed_inputs_and_taken_outputs():
    a, b = tl.ones(4), tl.ones(4)
    ra, rb = lib.tl_tensor_refcount(a._p), lib.tl_tensor_refcount(b._p)
    for _ in range(100):
        c = a + b
        a.add_(b)
        tl.add(a, b, out=c)
        d = a + tl.ones(4, dtype=tl.int32)
    assert lib.tl_tensor_refcount(a._p) == ra and lib.tl_tensor_refcount(b._p) == rb
    assert lib.tl_tensor_refcount(c._p) == 1 and lib.tl_tensor_refcount(d._p) == 1


def test_in_place_partial_overlap_still_refused():
    base = tl.zeros(10)
    x, y = base[0:8], base[2:10]
    with pytest.raises(RuntimeError, match="some elements of the input tensor and the written-to tensor"):
        tl.add(x, x, out=y)


def test_meta_tensors_on_the_quick_path():
    m = tl.empty(2, 3, device="meta")
    r = m + m
    assert r.device.type == "meta" and tuple(r.shape) == (2, 3)


def test_spare_blocks_across_threads():
    made = []

    def work():
        for _ in range(200):
            made.append(tl.ones(1) + tl.ones(1))

    ts = [threading.Thread(target=work) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    # freed here, on the main thread, from blocks allocated on the workers
    assert sum(x.item() for x in made) == 2 * 400
    made.clear()
    for _ in range(200):
        assert (tl.ones(1) + tl.ones(1)).item() == 2
