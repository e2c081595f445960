"""The thread pool (runtime/src/parallel.c, docs/RUNTIME.md "Threads").

The pool alone: runtime/src/parallel.c with a C harness (parallel_harness.c)
built plain, under ASan + UBSan and under TSan, one scenario per test (every
index of a region once, mutually waiting jobs, several callers, nesting,
fork). Through torchlet: results with more threads than cores, from several
Python threads at once, and in a forked child that starts its own workers.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import torchlet as tl

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
SOURCES = [ROOT / "runtime" / "src" / "parallel.c", HERE / "parallel_harness.c"]
GCC = shutil.which("gcc")
BUILDS = {
    "plain": ["-O2"],
    "asan": ["-O1", "-g", "-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=undefined"],
    "tsan": ["-O1", "-g", "-fsanitize=thread"],
}
SCENARIOS = ["cover", "jobs", "callers", "nested", "fork"]


def clean_env() -> dict:
    """no sanitizer runtime preloaded by the caller (make asan-test preloads libasan)"""
    return {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS",
                                                              "TSAN_OPTIONS")}


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    if GCC is None:
        pytest.skip("gcc is not available")
    out = tmp_path_factory.mktemp("parallel_harness")
    built = {}
    for name, flags in BUILDS.items():
        exe = out / f"harness_{name}"
        cmd = [GCC, "-std=gnu11", "-Wall", "-Wextra", "-Werror", *flags, f"-I{ROOT / 'runtime' / 'include'}",
               *map(str, SOURCES), "-pthread", "-o", str(exe)]
        r = subprocess.run(cmd, capture_output=True, text=True, env=clean_env())
        if r.returncode != 0 and name != "plain" and "cannot find" in r.stderr:  # no sanitizer runtime here
            continue
        assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stderr}"
        built[name] = exe
    return built


@pytest.mark.parametrize("build", list(BUILDS))
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_pool_harness(harness, build, scenario):
    if build not in harness:
        pytest.skip(f"no {build} runtime")
    if build == "tsan" and scenario == "fork":
        pytest.skip("TSan does not support starting threads after a multi-threaded fork")
    env = clean_env()
    env["ASAN_OPTIONS"] = "detect_leaks=0"
    env["TSAN_OPTIONS"] = "halt_on_error=1"
    rounds = "3" if build != "plain" else "20"
    r = subprocess.run([str(harness[build]), scenario, rounds], capture_output=True, text=True, env=env, timeout=300)
    if build == "tsan" and "FATAL: ThreadSanitizer" in r.stderr:  # e.g. an unsupported memory layout
        pytest.skip(r.stderr.strip().splitlines()[0])
    assert "WARNING: ThreadSanitizer" not in r.stderr, r.stderr[-4000:]
    assert r.returncode == 0 and f"PASS {scenario}" in r.stdout, r.stdout + r.stderr[-4000:]


@pytest.fixture
def restore_threads():
    before = tl.get_num_threads()
    yield
    tl.set_num_threads(before)


def _ops(x, y):
    """a few threaded kernels: pointwise, reductions (whole and per row), softmax, a product"""
    return [tl.add(x, y), tl.mul(x, y.t()), tl.sum(x), tl.sum(x, 1), tl.amax(x, 0), tl.softmax(x, 1),
            tl.mm(x, y)]


@pytest.mark.parametrize("threads", [2, 3, 5, 64, 100])
def test_thread_counts_give_the_same_bits(restore_threads, threads):
    """more threads than cores (and than the pool's limit) work; results are
    the one-thread bits (mm: OpenBLAS's own split may round differently)"""
    rng = np.random.default_rng(threads)
    a = rng.standard_normal((517, 517)).astype(np.float32)
    b = rng.standard_normal((517, 517)).astype(np.float32)
    x, y = tl.from_numpy(a), tl.from_numpy(b)
    tl.set_num_threads(1)
    one = [t.numpy() for t in _ops(x, y)]
    tl.set_num_threads(threads)
    assert tl.get_num_threads() == threads
    many = [t.numpy() for t in _ops(x, y)]
    for o, m in zip(one[:-1], many[:-1]):
        np.testing.assert_array_equal(o, m)
    np.testing.assert_allclose(many[-1], a @ b, rtol=1e-4, atol=1e-3)


def test_python_threads_share_the_pool(restore_threads):
    """four Python threads run threaded kernels at once: one gets the pool,
    the others run their regions serially; every result is right"""
    tl.set_num_threads(2)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((256, 1024)).astype(np.float32)
    b = rng.standard_normal((1024, 256)).astype(np.float32)
    x, y = tl.from_numpy(a), tl.from_numpy(b)
    want_sum, want_add, want_mm = np.sum(a.astype(np.float64), 1), a + 1.5, a @ b
    bad = []

    def work():
        for _ in range(20):
            if not (np.allclose(tl.sum(x, 1).numpy(), want_sum, rtol=1e-4, atol=1e-3)
                    and np.array_equal(tl.add(x, 1.5).numpy(), want_add)
                    and np.allclose(tl.mm(x, y).numpy(), want_mm, rtol=1e-4, atol=1e-2)):
                bad.append(1)
    ths = [threading.Thread(target=work) for _ in range(4)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    assert not bad


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_forked_child_starts_its_own_workers():
    """the child has one thread after fork; set_num_threads(2) there starts new
    workers (the parent's do not exist in the child) for kernels and BLAS"""
    code = r"""
import os, sys
import numpy as np
import torchlet as tl
tl.set_num_threads(2)
a = np.arange(1 << 20, dtype=np.float32) % 7
x = tl.from_numpy(a)
m = tl.from_numpy(np.ones((512, 512), np.float32))
s = tl.sum(x).item(); p = tl.mm(m, m).numpy()
pid = os.fork()
if pid == 0:
    ok = tl.get_num_threads() == 1
    tl.set_num_threads(2)
    ok = ok and tl.sum(x).item() == s and np.array_equal(tl.mm(m, m).numpy(), p)
    ok = ok and np.array_equal(tl.add(x, x).numpy(), a + a)
    os._exit(0 if ok else 3)
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status) or (0 if tl.sum(x).item() == s else 4))
"""
    r = subprocess.run([sys.executable, "-c", code], timeout=120, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]


def test_default_thread_count_follows_omp_num_threads():
    code = "import torchlet as tl; print(tl.get_num_threads())"
    for val, want in (("3", "3"), ("2,1", "2")):
        env = dict(os.environ, OMP_NUM_THREADS=val)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
        assert out.stdout.strip() == want, out.stderr[-2000:]
