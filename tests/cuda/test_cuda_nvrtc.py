"""NVRTC, the kernel cache and the prebuild, without a GPU.

test_every_program_builds compiles EVERY generated CUDA program to CUBIN for
sm_80 and sm_90 with ptxas -v and fails on register spills, into the kernel
cache (TORCHLET_PREBUILD_OUT names another folder), ptxas's report kept beside
each image: a rerun compiles only what changed. The reduction and indexing
programs' own tests go through the same cache first.
Skipped only when the NVRTC wheel (`make test` installs the cuda extra)
cannot be loaded."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

nvrtc = pytest.importorskip("torchlet.cuda.nvrtc")
if not nvrtc.available():
    pytest.skip("NVRTC (pip install 'torchlet[cuda]') is not available", allow_module_level=True)

from torchlet.cuda import prebuild  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
ADD = nvrtc.program_source(ROOT / "generated" / "cuda" / "ufunc_add.cu")


@pytest.fixture(scope="session")
def build_folder(tmp_path_factory) -> Path:
    """where the program tests and the prebuild keep images and ptxas reports"""
    return Path(os.environ.get("TORCHLET_PREBUILD_OUT") or nvrtc.cache_dir() or tmp_path_factory.mktemp("prebuild"))


def test_target_clamps_to_supported_archs():
    archs = nvrtc.supported_archs()
    assert nvrtc.target(90) == ("sm_90", True)
    top = max(archs)
    assert nvrtc.target(top + 5) == (f"compute_{top}", False)   # newer than NVRTC knows: PTX
    with pytest.raises(nvrtc.NvrtcError, match="cannot target compute capability"):
        nvrtc.target(min(archs) - 1)


def test_driver_major_rule():
    major = nvrtc.version()[0]
    nvrtc.check_driver(None)
    nvrtc.check_driver(major * 1000 + 20)
    with pytest.raises(nvrtc.NvrtcError, match="cannot build kernels for this CUDA"):
        nvrtc.check_driver((major - 1) * 1000)


def test_parse_ptxas():
    log = ("ptxas info    : Compiling entry function 'k1' for 'sm_90'\nptxas info    : Function properties for k1\n"
           "ptxas         .     8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads\n"
           "ptxas info    : Used 40 registers, used 0 barriers\n"
           "ptxas info    : Compiling entry function 'k2' for 'sm_90'\nptxas info    : Function properties for k2\n"
           "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
           "ptxas info    : Used 18 registers, used 0 barriers\n")
    u = nvrtc.parse_ptxas(log)
    assert [(x.name, x.registers, x.stack, x.spill_stores, x.spill_loads) for x in u] == [
        ("k1", 40, 8, 4, 12), ("k2", 18, 0, 0, 0)]
    with pytest.raises(nvrtc.NvrtcError, match="k1: 8 B stack, 4 B spill stores"):
        nvrtc.check_usage("p", u)


def test_cache_hit_miss_corrupt_and_disabled(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHLET_KERNEL_CACHE", str(tmp_path))
    assert nvrtc.cache_dir() == tmp_path
    img = nvrtc.compile_program("ufunc_add", ADD, 90)
    assert img[:4] == b"\x7fELF"                       # a CUBIN
    files = sorted(tmp_path.iterdir())
    assert len(files) == 2 and re.fullmatch(r"ufunc_add-sm_90-nvrtc\d+\.\d+-[0-9a-f]{40}\.cubin", files[0].name)
    assert files[1].name == files[0].name + ".usage"   # ptxas's report beside the image
    image, usage, cached = nvrtc.cached_build("ufunc_add", ADD, 90)
    assert cached and image == img and {u.name for u in usage} >= {"ufunc_add_f32_vec", "ufunc_add_f16_cast"}
    assert usage == nvrtc.compile_report("ufunc_add", ADD, 90)[1]
    files[1].write_text("not json")                      # a damaged report: compiled again, report rewritten
    assert nvrtc.cached_build("ufunc_add", ADD, 90)[1:] == (usage, False)
    assert nvrtc.cached_build("ufunc_add", ADD, 90)[1:] == (usage, True)
    assert nvrtc.cached_image("ufunc_add", ADD, 90) == img
    # the key covers the source: another text is a miss
    assert nvrtc.cached_image("ufunc_add", ADD + "\n", 90) is None
    # a damaged file is a miss, and compiling again repairs it
    data = files[0].read_bytes()
    files[0].write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    assert nvrtc.cached_image("ufunc_add", ADD, 90) is None
    assert nvrtc.compile_program("ufunc_add", ADD, 90) == img
    assert nvrtc.cached_image("ufunc_add", ADD, 90) == img
    monkeypatch.setenv("TORCHLET_KERNEL_CACHE", "0")
    assert nvrtc.cache_dir() is None and nvrtc.cached_image("ufunc_add", ADD, 90) is None


def test_cache_key_covers_the_shared_texts(tmp_path, monkeypatch):
    """a program's .cu file names the prelude by an #include line; what is
    compiled, and so the cache key, has the prelude's text: changing only the
    prelude changes the key"""
    for d in nvrtc.SHARED_DIRS:
        (tmp_path / d).mkdir(parents=True)
        for f in (ROOT / d).iterdir():
            if f.suffix in (".h", ".cuh"):
                shutil.copy(f, tmp_path / d / f.name)
    monkeypatch.setattr(nvrtc, "_ROOT", tmp_path)
    cu = ROOT / "generated" / "cuda" / "ufunc_add.cu"
    assert nvrtc.program_source(cu) == ADD
    key = nvrtc.cache_path(tmp_path, "ufunc_add", ADD, 90)
    prelude = tmp_path / "kernels" / "cuda" / "tl_cuda_prelude.cuh"
    prelude.write_text(prelude.read_text().replace("return __umulhi(a, b);", "return __umulhi(b, a);"))
    changed = nvrtc.program_source(cu)
    assert changed != ADD and "return __umulhi(b, a);" in changed
    assert nvrtc.cache_path(tmp_path, "ufunc_add", changed, 90) != key
    # a shared text that is not there is an error, not a silent omission
    prelude.unlink()
    with pytest.raises(nvrtc.NvrtcError, match="no shared text 'tl_cuda_prelude.cuh'"):
        nvrtc.program_source(cu)


def test_cache_default_location(monkeypatch, tmp_path):
    monkeypatch.delenv("TORCHLET_KERNEL_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert nvrtc.cache_dir() == tmp_path / "torchlet" / "kernels"


def test_unwritable_cache_warns_once(tmp_path, monkeypatch):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    if os.access(ro, os.W_OK):
        pytest.skip("running as a user who can write anywhere")
    monkeypatch.setenv("TORCHLET_KERNEL_CACHE", str(ro / "sub"))
    with pytest.warns(RuntimeWarning, match="not writable"):
        nvrtc.compile_program("ufunc_neg", nvrtc.program_source(ROOT / "generated/cuda/ufunc_neg.cu"), 90)


def test_prebuild_command(tmp_path):
    out, src = tmp_path / "cache", tmp_path / "src"
    src.mkdir()
    for name in ("ufunc_neg.cu", "ufunc_where.cu"):   # two programs: the full set is the test below
        (src / name).write_text((ROOT / "generated" / "cuda" / name).read_text())
    r = subprocess.run([sys.executable, "-c", "import sys; from torchlet.cuda import prebuild; "
                        "sys.exit(prebuild.main(sys.argv[1:]))", "--arch", "sm_90", "--out", str(out), "--strict",
                        "--src", str(src)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "sm_90: 2 programs, 57 kernels (2 programs / 57 kernels compiled" in r.stdout
    # a second run finds everything in the cache
    again = prebuild.build([90], out, jobs=1, src=src)
    assert [(x.cached, x.error) for x in again] == [(True, None), (True, None)]
    assert sum(x.kernels for x in again) == 3 * 9 + 3 * 10


@pytest.mark.parametrize("cc", [80, 90])
def test_reduce_program_builds(cc, build_folder):
    """the reductions' program alone (the full set below takes minutes): every
    operator x dtype pair of kernels, no spills, no stack frame"""
    src = nvrtc.program_source(ROOT / "generated" / "cuda" / "reduce.cu")
    image, usage, _ = nvrtc.cached_build("reduce", src, cc, build_folder)
    nvrtc.check_usage("reduce", usage)
    names = {u.name for u in usage}
    # rows, combine, cols per operator and dtype (sum ... prod; var, std, logsumexp; any, all; the six norms; nansum);
    # softmax, log_softmax, their backward; layer_norm's three
    assert len(names) == 3 * (10 + 4 + 10 + 10 + 10 + 10 + 10 + 3 * 4 + 2 * 10 + 6 * 4 + 4) + 2 * 4 + 2 * 4 + 3 * 4 + 2 * 10
    assert {"tl_reduce_sum_f16", "tl_reduce_sum_f16_combine", "tl_reduce_sum_f16_cols", "tl_reduce_prod_i64", "tl_cumsum_f16", "tl_cumprod_b", "tl_reduce_argmax_i64", "tl_reduce_mean_bf16",
            "tl_log_softmax_f16", "tl_softmax_backward_bf16", "tl_log_softmax_backward_f64",
            "tl_layer_norm_f16", "tl_layer_norm_backward_bf16", "tl_layer_norm_backward_wb_f64",
            "tl_reduce_var_f16_combine", "tl_reduce_std_f64_cols", "tl_reduce_logsumexp_bf16", "tl_reduce_any_b",
            "tl_reduce_all_f64", "tl_reduce_norm2_f32", "tl_reduce_norm_p_f16_combine", "tl_reduce_norm0_f64"} <= names
    assert "tl_reduce_mean_i32" not in names and "tl_reduce_var_i64" not in names and "tl_reduce_argmax_b" in names
    assert all(u.stack == 0 for u in usage) and image[:4] == b"\x7fELF"


#: gathers and scatters by element size, scatter_add per real dtype, the counts, embedding backward and
#: nll_loss forward / backward per floating dtype
INDEX_KERNELS = 5 + 5 + 10 + 1 + 3 * 4


@pytest.mark.parametrize("cc", [80, 90])
def test_index_program_builds(cc, build_folder):
    """the indexing program alone: every kernel, no spills, no stack frame"""
    src = nvrtc.program_source(ROOT / "generated" / "cuda" / "index.cu")
    image, usage, _ = nvrtc.cached_build("index", src, cc, build_folder)
    nvrtc.check_usage("index", usage)
    names = {u.name for u in usage}
    assert len(names) == INDEX_KERNELS
    assert {"tl_index_gather_1", "tl_index_gather_16", "tl_index_scatter_8", "tl_index_scatter_add_b", "tl_index_scatter_add_f16",
            "tl_index_scatter_add_i64", "tl_index_count", "tl_embedding_backward_bf16", "tl_nll_loss_forward_f64",
            "tl_nll_loss_backward_f16"} <= names
    assert all(u.stack == 0 for u in usage) and image[:4] == b"\x7fELF"


def test_every_program_builds(build_folder):
    """every generated program -> CUBIN for sm_80 and sm_90, no spills. Into the
    user's kernel cache (content-addressed: source, options, arch and NVRTC
    version), so a rerun on the same machine only checks what changed; a
    fresh machine compiles all (~1,900 kernels per arch: minutes on 2 cores)"""
    out = build_folder
    results = prebuild.build([90, 80], out, jobs=os.cpu_count() or 2, strict=True)
    failed = [f"{r.program} sm_{r.cc}: {r.error}" for r in results if r.error]
    assert not failed, "\n".join(failed)
    n = len(prebuild.programs())
    assert len(results) == 2 * n and n >= 90
    assert {r.program for r in results} >= {"ufunc_add", "ufunc_copy", "reduce", "index"}
    for r in results:   # three kernels per supported dtype (reduce: two per operator and dtype), all reported by ptxas
        if r.program == "index":
            assert r.kernels == INDEX_KERNELS
            continue
        assert r.kernels % (2 if r.program == "reduce" else 3) == 0 and r.kernels > 0
    assert len(list(out.glob("*-sm_90-*.cubin"))) >= n   # the cache may hold older sources too
