"""Errors (thread-local, mapped to Python exceptions), memory behaviour
(allocator cache, a million tensors), generators, threads and fork."""
import gc
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import torchlet as tl
from torchlet import _errors, _rt
from torchlet._C import ffi, lib


@pytest.mark.parametrize("kind,exc", [(lib.TL_ERR_RUNTIME, RuntimeError), (lib.TL_ERR_VALUE, ValueError),
                                      (lib.TL_ERR_INDEX, IndexError), (lib.TL_ERR_TYPE, TypeError),
                                      (lib.TL_ERR_NOT_IMPLEMENTED, NotImplementedError),
                                      (lib.TL_ERR_MEMORY, MemoryError)])
def test_error_kinds_map_to_exceptions(kind, exc):
    assert lib.tl_set_error(kind, b"boom %s", ffi.new("char[]", b"here")) == -1
    assert lib.tl_error_kind_get() == kind
    with pytest.raises(exc, match="^boom here$"):
        _errors.check(-1)
    assert lib.tl_error_kind_get() == lib.TL_OK          # raising clears it
    assert ffi.string(lib.tl_error_message()) == b""


def test_long_messages_are_truncated_not_overflowed():
    lib.tl_set_error(lib.TL_ERR_VALUE, b"%s", ffi.new("char[]", b"x" * 10000))
    assert len(ffi.string(lib.tl_error_message())) == 2047
    lib.tl_clear_error()


def test_errors_are_thread_local():
    lib.tl_set_error(lib.TL_ERR_INDEX, b"main thread")
    seen = []

    def worker():
        seen.append(lib.tl_error_kind_get())
        try:
            _rt.empty(-1)
        except RuntimeError as e:
            seen.append(str(e))

    th = threading.Thread(target=worker)
    th.start()
    th.join()
    assert seen[0] == lib.TL_OK and "negative dimension" in seen[1]
    assert lib.tl_error_kind_get() == lib.TL_ERR_INDEX
    lib.tl_clear_error()


def test_allocator_reuses_large_blocks():
    st = ffi.new("tl_allocator_stats *")
    lib.tl_allocator_get_stats(st)
    hits0 = st.n_cache_hits
    for _ in range(10):
        t = _rt.empty(1 << 22)                 # 16 MiB
        del t
    lib.tl_allocator_get_stats(st)
    assert st.n_cache_hits - hits0 >= 9
    assert st.cached_bytes >= 16 << 20
    lib.tl_allocator_empty_cache()
    lib.tl_allocator_get_stats(st)
    assert st.cached_bytes == 0 and st.cached_blocks == 0


def test_allocation_alignment_and_sizes():
    for n in (1, 3, 63, 64, 65, 4097, 1 << 20, (1 << 20) + 1, 5 << 20):
        t = _rt.empty(n, dtype=tl.uint8)
        assert t.data_ptr() % 64 == 0
        _rt.fill_(t, 1)                        # the whole block is writable
    assert _rt.empty(0).data_ptr() == 0


def _mapping_of(addr: int) -> tuple[str, list[str]]:
    """(the /proc/self/smaps header line of the mapping holding addr, its VmFlags)"""
    head = None
    with open("/proc/self/smaps") as f:
        for line in f:
            if "-" in line.split()[0] and ":" not in line.split()[0]:
                lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
                head = line.strip() if lo <= addr < hi else None
            elif head and line.startswith("VmFlags:"):
                return head, line.split()[1:]
    raise AssertionError(f"no mapping holds {addr:#x}")


@pytest.mark.skipif(not os.path.exists("/sys/kernel/mm/transparent_hugepage/enabled")
                    or "[never]" in open("/sys/kernel/mm/transparent_hugepage/enabled").read()
                    or os.environ.get("TORCHLET_ASAN_RUN") == "1", reason="no transparent huge pages (or ASan)")
def test_large_blocks_are_their_own_huge_page_mappings():
    """a block of 4 MiB or more is mapped for itself, 2 MiB aligned and advised
    for huge pages (VmFlags hg), even after a large free has moved glibc's mmap
    threshold up so that malloc would hand out heap memory already faulted in
    4 KiB pages"""
    big = np.ones(24 << 20, dtype=np.uint8)
    del big                                    # raises glibc's dynamic mmap threshold to ~24 MiB
    lib.tl_allocator_empty_cache()
    for n in (4 << 20, 5 << 20, 16 << 20):
        t = _rt.empty(n, dtype=tl.uint8)
        _rt.fill_(t, 1)
        head, flags = _mapping_of(t.data_ptr())
        assert t.data_ptr() % (2 << 20) == 0
        assert "[heap]" not in head and "hg" in flags, (head, flags)
        del t


def _rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


@pytest.mark.skipif(os.environ.get("TORCHLET_ASAN_RUN") == "1", reason="ASan quarantines freed memory")
def test_million_tensors_memory_flat():
    for _ in range(20000):                     # warm up pools
        _rt.empty(2, 3)
    gc.collect()
    before = _rss_mb()
    e = lib.tl_empty
    rel = lib.tl_tensor_release
    for _ in range(500000):                    # raw C handles
        rel(e(2, [2, 3], lib.TL_FLOAT32, lib.TL_CPU))
    for _ in range(500000):                    # Python tensors
        t = _rt.empty(2, 3)
        v = _rt.transpose(t, 0, 1)
    del t, v
    gc.collect()
    after = _rss_mb()
    assert after - before < 8, (before, after)


def test_generator_seeding():
    g = tl.Generator()
    g.manual_seed(1234)
    a = [g._random64() for _ in range(5)]
    g.manual_seed(1234)
    assert [g._random64() for _ in range(5)] == a
    assert g.initial_seed() == 1234
    s = g.get_state()
    x = [g._random64() for _ in range(3)]
    g.set_state(s)
    assert [g._random64() for _ in range(3)] == x
    tl.manual_seed(7)
    assert tl.initial_seed() == 7
    d1 = tl.default_generator._random64()
    tl.manual_seed(7)
    assert tl.default_generator._random64() == d1
    assert tl.Generator().manual_seed(7)._random64() == d1
    assert tl.Generator().manual_seed(8)._random64() != d1


def test_philox_known_answer():
    # Philox4x32-10 test vector (Random123 kat_vectors): counter=0, key=0
    out = ffi.new("uint32_t[4]")
    lib.tl_philox4x32(0, 0, out)
    assert list(out) == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]


def test_num_threads_api():
    before = tl.get_num_threads()
    tl.set_num_threads(3)
    assert tl.get_num_threads() == 3
    tl.set_num_threads(before)


def test_fork_after_parallel_region_does_not_hang():
    code = r"""
import os, sys
import numpy as np
import torchlet as tl
from torchlet import _rt
tl.set_num_threads(2)
a = _rt.ones(1 << 20)
b = _rt.clone(a)                   # parallel copy in the parent
pid = os.fork()
if pid == 0:
    c = _rt.clone(a)               # the child must not hang in libgomp
    os._exit(0 if c.numpy().sum() == (1 << 20) else 3)
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
"""
    env = dict(os.environ, OMP_NUM_THREADS="2")
    r = subprocess.run([sys.executable, "-c", code], env=env, timeout=60)
    assert r.returncode == 0


def test_forced_capability_env():
    code = "import torchlet as tl; print(tl.get_cpu_capability())"
    env = dict(os.environ, TORCHLET_CPU_CAPABILITY="default")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "default"
    env["TORCHLET_CPU_CAPABILITY"] = "bogus"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == tl._supported_cpu_capabilities()[-1]
