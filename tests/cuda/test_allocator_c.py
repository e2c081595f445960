"""The caching allocator's C unit test (alloc_test.c) on a host-malloc backend,
built with AddressSanitizer and UBSan where the compiler has them."""
from __future__ import annotations

import subprocess

from cuda_helpers import HERE, ROOT, gcc


def _build(tmp_path, sanitize: bool):
    exe = tmp_path / "alloc_test"
    cmd = [gcc(), "-std=gnu11", "-O1", "-g", "-Wall", "-Wextra", "-Werror",
           f"-I{ROOT / 'runtime' / 'include'}", f"-I{ROOT / 'runtime' / 'src' / 'cuda'}",
           "-o", str(exe), str(HERE / "alloc_test.c"), str(ROOT / "runtime" / "src" / "cuda" / "caching_allocator.c"),
           "-lpthread"]
    if sanitize:
        cmd[1:1] = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer"]
    return exe, subprocess.run(cmd, capture_output=True, text=True)


def test_caching_allocator_c(tmp_path):
    exe, p = _build(tmp_path, sanitize=True)
    if p.returncode != 0:   # no sanitizer runtime: the plain build still runs the checks
        exe, p = _build(tmp_path, sanitize=False)
    assert p.returncode == 0, p.stderr
    r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300,
                       env={"ASAN_OPTIONS": "detect_leaks=1", "UBSAN_OPTIONS": "halt_on_error=1"})
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().endswith("checks, passed"), r.stdout
    assert "ok random traffic" in r.stdout
