"""The host-side decisions of the CUDA launcher, as pure C functions
(kernels/cuda/tl_cuda_loops.c, built into the host-shim library): magic-number
division, grid sizes, PyTorch's 32-bit indexing rule and split, coalescing,
variant choice."""

from __future__ import annotations

import ctypes
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
if shutil.which("g++") is None:
    pytest.skip("the host shim needs g++", allow_module_level=True)

import shim_build  # noqa: E402
from test_cuda_shim import OPS  # noqa: E402

MAX_DIMS, MAX_OPS = 25, 4
INT32_MAX = 2**31 - 1


class View(ctypes.Structure):
    _fields_ = [("nops", ctypes.c_int), ("ndim", ctypes.c_int), ("shape", ctypes.c_int64 * MAX_DIMS),
                ("strides", (ctypes.c_int64 * MAX_DIMS) * MAX_OPS), ("data", ctypes.c_void_p * MAX_OPS),
                ("dtype", ctypes.c_int * MAX_OPS), ("cpu_scalar", ctypes.c_int * MAX_OPS)]


class Kernels(ctypes.Structure):
    _fields_ = [("vec", ctypes.c_void_p), ("strided", ctypes.c_void_p), ("cast", ctypes.c_void_p),
                ("vec_size", ctypes.c_int), ("elems_per_thread", ctypes.c_int), ("dtypes", ctypes.c_int * MAX_OPS)]


PIECE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(View), ctypes.c_void_p)


@pytest.fixture(scope="module")
def lib():
    lib = shim_build.load(OPS)
    lib.tl_cuda_view_numel.restype = ctypes.c_int64
    lib.tl_cuda_can_use_32bit.argtypes = [ctypes.POINTER(View), ctypes.c_int64]
    lib.tl_cuda_split_32bit.argtypes = [ctypes.POINTER(View), ctypes.c_int64, PIECE, ctypes.c_void_p]
    lib.tl_cuda_grid_size.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int]
    lib.tl_cuda_grid_size.restype = ctypes.c_uint32
    return lib


def view(shape, strides, data=None, dtypes=None):
    v = View()
    v.nops, v.ndim = len(strides), len(shape)
    for d, s in enumerate(shape):
        v.shape[d] = s
    for i, st in enumerate(strides):
        for d, s in enumerate(st):
            v.strides[i][d] = s
        v.data[i] = (data or [0x10000] * len(strides))[i]
        v.dtype[i] = (dtypes or [8] * len(strides))[i]
    return v


@pytest.mark.parametrize("d", [1, 2, 3, 7, 10, 128, 1000, 4099, 65536, 2**20 + 7, 2**30, 2**31 - 1])
def test_int_divider(lib, d):
    magic, shift = ctypes.c_uint32(), ctypes.c_uint32()
    lib.tl_cuda_int_divider(ctypes.c_uint32(d), ctypes.byref(magic), ctypes.byref(shift))
    for n in [0, 1, d - 1, d, d + 1, 2 * d + 3, 12345678, 2**31 - 1, 2**31 - 2, d * 3 - 1]:
        if not 0 <= n < 2**31:
            continue
        t = (n * magic.value) >> 32
        assert (t + n) >> shift.value == n // d, (n, d)


def test_grid_size(lib):
    assert lib.tl_cuda_grid_size(0, 0, 8) == 0
    assert lib.tl_cuda_grid_size(0, 1, 8) == 1
    assert lib.tl_cuda_grid_size(0, 1024, 8) == 1
    assert lib.tl_cuda_grid_size(0, 1025, 8) == 2
    assert lib.tl_cuda_grid_size(0, 2048, 16) == 1
    assert lib.tl_cuda_grid_size(1, 512, 8) == 1     # strided: 4 per thread
    assert lib.tl_cuda_grid_size(2, 513, 8) == 2
    assert lib.tl_cuda_grid_size(0, INT32_MAX, 8) == (INT32_MAX + 1023) // 1024


def test_can_use_32bit(lib):
    v = view([1000, 1000], [[4, 4000], [4, 4000]])
    assert lib.tl_cuda_can_use_32bit(ctypes.byref(v), INT32_MAX)
    assert not lib.tl_cuda_can_use_32bit(ctypes.byref(v), 999_999)        # numel
    v = view([2**20, 600], [[4, 4 * 2**20], [0, 0]])                     # 2.4 GB extent, numel fits
    assert lib.tl_cuda_view_numel(ctypes.byref(v)) < INT32_MAX
    assert not lib.tl_cuda_can_use_32bit(ctypes.byref(v), INT32_MAX)


def _pieces(lib, v, limit):
    got = []

    @PIECE
    def cb(p, ctx):
        pv = p.contents
        got.append(([pv.shape[d] for d in range(pv.ndim)], [pv.data[i] for i in range(pv.nops)]))
        assert lib.tl_cuda_can_use_32bit(p, limit)
        return 0

    assert lib.tl_cuda_split_32bit(ctypes.byref(v), limit, cb, None) == 0
    return got


def test_split_covers_every_element_once(lib):
    # PyTorch's with_32bit_indexing: halves of the dim with the largest extent
    shape, strides = [30, 7, 11], [[4, 120, 840], [0, 4, 28]]
    v = view(shape, strides, data=[1 << 20, 1 << 24])
    pieces = _pieces(lib, v, 1000)
    assert len(pieces) > 1
    seen = set()
    for pshape, (d0, d1) in pieces:
        for i in range(pshape[0]):
            for j in range(pshape[1]):
                for k in range(pshape[2]):
                    off = d0 - (1 << 20) + i * 4 + j * 120 + k * 840
                    assert off not in seen
                    seen.add(off)
                    assert d1 - (1 << 24) + i * 0 + j * 4 + k * 28 == (off // 120 % 7) * 4 + (off // 840) * 28
    assert len(seen) == 30 * 7 * 11


def test_split_huge_extent(lib):
    v = view([2**20, 600], [[4, 4 * 2**20], [4, 4 * 2**20]])
    pieces = _pieces(lib, v, INT32_MAX)
    assert sum(s[0] * s[1] for s, _ in pieces) == 2**20 * 600
    assert all(s[0] == 2**20 for s, _ in pieces)   # the outer (largest extent) dim is the one split


def test_coalesce(lib):
    v = view([4, 1, 5, 3], [[4, 999, 16, 80], [4, 999, 16, 0]])
    lib.tl_cuda_view_coalesce(ctypes.byref(v))
    assert v.ndim == 2 and list(v.shape[:2]) == [20, 3]
    assert [v.strides[0][0], v.strides[0][1], v.strides[1][1]] == [4, 80, 0]


def test_pick_variant(lib):
    k = Kernels(0, 0, 0, 4, 8, (ctypes.c_int * MAX_OPS)(8, 8, 8, 0))
    aligned = view([100], [[4], [4], [4]], data=[0x1000, 0x2000, 0x3000])
    assert lib.tl_cuda_pick_variant(ctypes.byref(aligned), ctypes.byref(k)) == 0
    mis = view([100], [[4], [4], [4]], data=[0x1000, 0x2004, 0x3000])
    assert lib.tl_cuda_pick_variant(ctypes.byref(mis), ctypes.byref(k)) == 1
    scal = view([100], [[4], [0], [4]], data=[0x1000, 0x2004, 0x3000])
    scal.cpu_scalar[1] = 1                                    # a CPU scalar does not count
    assert lib.tl_cuda_pick_variant(ctypes.byref(scal), ctypes.byref(k)) == 0
    two = view([10, 10], [[4, 40], [4, 40], [4, 40]])
    assert lib.tl_cuda_pick_variant(ctypes.byref(two), ctypes.byref(k)) == 1
    cast = view([100], [[4], [4], [2]], dtypes=[8, 8, 6])
    assert lib.tl_cuda_pick_variant(ctypes.byref(cast), ctypes.byref(k)) == 2
