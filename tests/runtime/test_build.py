"""Build properties: C sources compile warning-free under -Wall -Wextra, kernel
variants target their instruction sets, and vector math reaches libmvec."""
import os
import pathlib
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("nm") is None,
                                reason="needs gcc and binutils")


def _setup():
    src = (ROOT / "setup.py").read_text().split("\ndef packages()")[0]   # flags only, no setup() call
    mod = type(sys)("tl_setup_flags")
    mod.__file__ = str(ROOT / "setup.py")
    exec(compile(src, str(ROOT / "setup.py"), "exec"), mod.__dict__)
    return mod


def test_c_sources_have_no_warnings():
    """every object of the current build compiled with no compiler output
    (-Wall -Wextra, the build's own flags: setup.py keeps each object's
    warnings beside it); a source the build has not compiled as it is now is
    compiled here with -Werror"""
    s = _setup()
    warned, unchecked = [], []
    for job in s.compile_jobs():
        w = job.warnings
        if job.stale() or not w.is_file() or w.stat().st_mtime < job.obj.stat().st_mtime:
            unchecked.append(job)
        elif w.read_text().strip():
            warned.append(f"{job.src} ({job.variant}):\n{w.read_text()}")

    def check(job):
        cmd = [*s.compiler(), *[f"-I{i}" for i in job.incs], *job.flags, "-Werror", "-fsyntax-only", str(job.src)]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        return r.stdout if r.returncode else None

    # one compiler per core: hundreds of concurrent gcc processes swamp a small machine
    with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        warned += [e for e in pool.map(check, unchecked) if e is not None]
    assert not warned, "\n".join(warned)


def test_libmvec_through_the_compiler(tmp_path):
    s = _setup()
    src = tmp_path / "k.c"
    src.write_text('#include <math.h>\n#include <stdint.h>\n#include "tl_mvec.h"\n'
                   "void f(float *restrict o, const float *restrict a, int64_t n) {\n"
                   "    for (int64_t i = 0; i < n; i++) o[i] = expf(a[i]) + sinf(a[i]);\n}\n")
    want = {"DEFAULT": "_ZGVbN4v_expf", "AVX2": "_ZGVdN8v_expf", "AVX512": "_ZGVeN16v_expf"}
    for cap, extra in s.KERNEL_VARIANTS.items():
        obj = tmp_path / f"k_{cap}.o"
        subprocess.run([*s.compiler(), f"-I{ROOT / 'runtime' / 'include'}", *s.COMMON, *extra, "-c", str(src),
                        "-o", str(obj)], check=True)
        syms = subprocess.run(["nm", str(obj)], capture_output=True, text=True, check=True).stdout
        assert want[cap] in syms, (cap, syms)


def test_kernel_variants_use_their_isa():
    objs = list((ROOT / "build" / "obj").glob("kern_AVX512-*/kernels/cpu/copy_kernel.o"))
    if not objs or shutil.which("objdump") is None:
        pytest.skip("no kernel objects in build/obj")
    newest = max(objs, key=lambda p: p.stat().st_mtime)
    asm = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(newest)], capture_output=True,
                         text=True).stdout
    assert "zmm" in asm
    base = newest.parent.parent.parent.parent
    default = max(base.glob("kern_DEFAULT-*/kernels/cpu/copy_kernel.o"), key=lambda p: p.stat().st_mtime)
    asm = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(default)], capture_output=True,
                         text=True).stdout
    assert "ymm" not in asm and "zmm" not in asm


def test_object_cache_tracks_sources_headers_and_flags(tmp_path):
    s = _setup()
    (tmp_path / "h.h").write_text("#define V 1\n")
    src = tmp_path / "a.c"
    src.write_text('#include "h.h"\nint f(void) { return V; }\n')
    s.OBJ_ROOT = tmp_path / "obj"
    job = s.Job(src, "common", ["-O2", "-fPIC"], [str(tmp_path)])
    assert job.stale()
    _, rc, out, _ = job.run()
    assert rc == 0, out
    assert not job.stale()
    import os
    import time
    earlier = time.time() - 100
    os.utime(job.obj, (earlier, earlier))            # a header it includes is now newer
    assert job.stale()
    job.run()
    assert not job.stale()
    os.utime(job.obj, (earlier, earlier))
    os.utime(src, (earlier - 10, earlier - 10))
    os.utime(tmp_path / "h.h", (earlier - 10, earlier - 10))
    assert not job.stale()                           # nothing newer than the object
    os.utime(tmp_path / "h.h", None)                 # touch the header
    assert job.stale()
    job.run()
    assert not job.stale()
    other = s.Job(src, "common", ["-O3", "-fPIC"], [str(tmp_path)])   # other flags: other folder
    assert other.obj != job.obj and other.stale()
