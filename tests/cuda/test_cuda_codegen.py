"""The CUDA rendering of the ufunc formulas (codegen/emit/ufunc_cuda.py):
golden fragments of generated/cuda/ufunc_add.cu, the _Generic rewrite, the
parameter struct on both sides, the embedded source, and NVRTC errors mapped
back to the formula file (needs the `cuda` extra's NVRTC; skipped without)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from codegen.emit import ufunc_cuda as uc

ROOT = Path(__file__).resolve().parents[2]
GEN = ROOT / "generated" / "cuda"


def _c_string_contents(c_text: str, var: str) -> str:
    """the concatenated literal assigned to `var` in a generated host file"""
    body = c_text.split(f"{var}[] =\n", 1)[1].split(";\n", 1)[0]
    parts = re.findall(r'^    "((?:[^"\\]|\\.)*)"$', body, re.M)
    return "".join(bytes(p, "utf-8").decode("unicode_escape") for p in parts)


def _joined_parts(c_text: str, prefix: str) -> str:
    """a host file's program text as the runtime joins it: its `<prefix>_parts`
    list of its own literals and the shared texts of tl_cuda_parts.c"""
    shared = (GEN / "tl_cuda_parts.c").read_text()
    names = re.search(rf"static const char \*const {prefix}_parts\[\] = \{{([^}}]*)\}};", c_text).group(1)
    names = [n.strip() for n in names.split(",")]
    assert names[-1] == "NULL"
    return "".join(_c_string_contents(shared if n.startswith("tl_cuda_text_") else c_text, n) for n in names[:-1])


def test_add_program_golden_fragments():
    cu = (GEN / "ufunc_add.cu").read_text()
    # the shared texts are included (NVRTC gets them pasted in: cuda_program.py), nothing else
    assert re.findall(r'^#include "(.*)"$', cu, re.M) == ["tl_cuda_prelude.cuh", "tl_cuda_ufunc_params.cuh"]
    assert cu.count("#include") == 2 and "struct alignas(sizeof(T) * VEC) tl_vec" not in cu
    # then a #line giving the .cu's own numbering back
    k = cu.split("\n").index('#include "tl_cuda_ufunc_params.cuh"')
    assert cu.split("\n")[k + 1] == f'#line {k + 3} "generated/cuda/ufunc_add.cu"'
    # one parameter struct with its size checked on the CUDA side
    assert (f"static_assert(sizeof(tl_cuda_ufunc_params) == {uc.PARAMS_SIZE},"
            in (GEN / "tl_cuda_ufunc_params.cuh").read_text())
    # the formula pasted from its header, under #line so errors name it
    assert '#line 1 "kernels/ufunc/add.h"' in cu
    assert "#define TL_UFUNC_add(self, other, alpha) ((self) + (alpha) * (other))" in cu
    n = cu.split("\n").index('#line 1 "kernels/ufunc/add.h"')
    back = [ln for ln in cu.split("\n")[n:] if ln.startswith("#line") and "generated/cuda/ufunc_add.cu" in ln][0]
    k = cu.split("\n").index(back)
    assert back == f'#line {k + 2} "generated/cuda/ufunc_add.cu"'
    # three kernels per dtype, 10 dtypes
    names = re.findall(r'extern "C" __global__ void __launch_bounds__\(128\) (\w+)\(const tl_cuda_ufunc_params p\)', cu)
    assert len(names) == 30
    assert names[:3] == ["ufunc_add_b_vec", "ufunc_add_b_strided", "ufunc_add_b_cast"]
    # float32: 4 lanes of 128 bits, 8 per thread; half: 8 lanes computed in float
    f32 = cu.split("ufunc_add_f32_vec(")[1]
    assert "constexpr uint32_t EPT = 8, VEC = 4, WORK = 128u * EPT;" in f32
    assert "const float a_alpha = p.args[0].f32;" in f32
    assert "r.v[k] = ufunc_add_f32_op(x1, x2, a_alpha);" in f32
    # the formula is called through a function placed at its #define (add.h:4)
    assert ('#line 4 "kernels/ufunc/add.h"\nstatic TL_CUDA_FORCEINLINE auto ufunc_add_f32_op(float x1, float x2, '
            'float a_alpha) { return TL_UFUNC_add(x1, x2, a_alpha); }\n') in cu
    f16 = cu.split("ufunc_add_f16_vec(")[1]
    assert "VEC = 8" in f16 and "tl_f32_to_f16(ufunc_add_f16_op(x1, x2, a_alpha))" in f16
    assert "const float x1 = s1 ? c1 : tl_f16_to_f32(v1.v[k]);" in f16
    # bool: C's conversions (add is `or`)
    assert "r.v[k] = (uint8_t)((ufunc_add_b_op(x1, x2, a_alpha)) != 0);" in cu
    # casting kernel: per-operand dtype loads
    assert "tl_cuda_fetch<float>(p.dtypes[2], in2 + off[2])" in cu


def test_host_side_embeds_the_program_exactly():
    """the runtime's join of a host file's parts is the text the prebuild
    composes from the .cu file (same source, same cache key), and each
    shared text is embedded once"""
    nvrtc = pytest.importorskip("torchlet.cuda.nvrtc")
    for op in ("add", "where", "gelu", "copy"):
        c = (GEN / f"ufunc_{op}_cuda.c").read_text()
        composed = nvrtc.program_source(GEN / f"ufunc_{op}.cu")
        assert _joined_parts(c, f"tl_ufunc_{op}_cuda") == composed
        assert f'static tl_cuda_program tl_ufunc_{op}_cuda_program = {{"ufunc_{op}", tl_ufunc_{op}_cuda_parts,' in c
        # the prelude pasted under its own name, the .cu's numbering after it
        assert '#line 1 "kernels/cuda/tl_cuda_prelude.cuh"\n' in composed and "#include" not in composed
        assert "static TL_CUDA_FORCEINLINE uint32_t tl_cuda_umulhi" not in c
    for name, prefix in (("reduce", "tl_reduce_cuda"), ("index", "tl_index_cuda")):
        c = (GEN / f"{name}_cuda.c").read_text()
        assert _joined_parts(c, prefix) == nvrtc.program_source(GEN / f"{name}.cu")
    shared = (GEN / "tl_cuda_parts.c").read_text()
    prelude = (ROOT / "kernels/cuda/tl_cuda_prelude.cuh").read_text()
    assert _c_string_contents(shared, "tl_cuda_text_tl_cuda_prelude_cuh") == (
        '#line 1 "kernels/cuda/tl_cuda_prelude.cuh"\n' + prelude)
    # no generated file but tl_cuda_parts.c holds a line of the prelude (as the .cu files show it)
    line = "static TL_CUDA_FORCEINLINE uint32_t tl_cuda_umulhi(uint32_t a, uint32_t b) {"
    assert line in prelude
    assert [p.name for p in GEN.iterdir() if line in p.read_text()] == ["tl_cuda_parts.c"]


def test_reduce_program_and_host_side():
    cu = (GEN / "reduce.cu").read_text()
    c = (GEN / "reduce_cuda.c").read_text()
    assert 'static tl_cuda_program tl_reduce_cuda_program = {"reduce", tl_reduce_cuda_parts,' in c
    # the parameter struct and the kernel templates included (shared texts), nothing else
    assert re.findall(r'^#include "(.*)"$', cu, re.M) == ["tl_cuda_prelude.cuh", "tl_cuda_reduce_params.h",
                                                          "tl_cuda_reduce.cuh"]
    assert "typedef struct tl_cuda_reduce_params {" not in cu
    assert ('extern "C" __global__ void __launch_bounds__(512) tl_reduce_argmax_f16(const tl_cuda_reduce_params p) {\n'
            "    tl_rd_rows<tl_rd_f16, tl_rd_arg<tl_rd_f16, true>>(p);") in cu
    assert "tl_rd_combine<double, tl_rd_mean<double>>(p);" in cu
    # the table: [sum][bool] present with an int64 accumulator, [mean][int32] absent
    assert "{&tl_reduce_cuda_fns[0][0], &tl_reduce_cuda_fns[0][1], &tl_reduce_cuda_fns[0][2], 8}," in c
    # absent: the six integer / bool entries of each floating-only reduction (mean, var, std, logsumexp,
    # the six norms, nansum), and complex64 / complex128 for each of the 19 reductions
    assert c.count("{NULL, NULL, NULL, 0},") == 6 * 11 + 19 * 2
    assert "static_assert(sizeof(tl_rd_welford<float, false>::acc) == 16" in cu
    # the scans: every real dtype, no complex one
    assert "tl_rd_scan<tl_rd_f16, tl_rd_sum<tl_rd_f16>>(p);" in cu and "tl_cumprod_c64" not in cu


def test_params_struct_both_sides():
    # one text: the programs include the .cuh, the host's header includes it too
    assert '#include "tl_cuda_ufunc_params.cuh"' in (GEN / "tl_cuda_ufunc_params.h").read_text()
    h = (GEN / "tl_cuda_ufunc_params.cuh").read_text()
    assert f"static_assert(sizeof(tl_cuda_ufunc_params) == {uc.PARAMS_SIZE}," in h
    for t, n, a, _ in uc.PARAM_FIELDS:
        assert f"    {t} {n}{a};" in h
    assert uc.PARAMS_SIZE % 8 == 0 and uc.PARAMS_SIZE < 4096   # the classic kernel parameter limit


def test_every_structured_ufunc_has_a_program():
    cpu = {p.name[len("ufunc_"):-2] for p in (ROOT / "generated" / "kernels").glob("ufunc_*.c")}
    cuda = {p.stem[len("ufunc_"):] for p in GEN.glob("ufunc_*.cu")} - {"copy"}   # copy: CUDA-only (copy/cast/fill)
    assert cpu == cuda


@pytest.mark.parametrize("src,want", [
    ("_Generic((x), float: f, default: g)(x)",
     "([&]() { auto tl_g_ = ((x)); (void)tl_g_; if constexpr (TL_IS(tl_g_, float)) return f(x); else return g(x); }())"),
    ("_Generic((a), double: (double)(c), default: (float)(c))",
     "([&]() { auto tl_g_ = ((a)); (void)tl_g_; if constexpr (TL_IS(tl_g_, double)) return (double)(c); "
     "else return (float)(c); }())"),
])
def test_generic_rewrite(src, want):
    assert uc.rewrite_generic(src) == want


def test_generic_rewrite_nested_and_continued_lines():
    text = "#define F(x) \\\n    _Generic((x), double: d1, \\\n default: _Generic((x), int: i1, default: f1))(x)\nnext"
    lines = uc._logical_lines(text)
    assert len(lines) == 4 and lines[1:3] == ["", ""] and lines[3] == "next"   # numbering kept
    out = uc.rewrite_generic(lines[0])
    assert "_Generic" not in out and out.count("[&]()") == 2


def test_compile_error_names_the_formula_file():
    nvrtc = pytest.importorskip("torchlet.cuda.nvrtc")
    if not nvrtc.available():
        pytest.skip("NVRTC (the cuda extra) is not installed")
    cu = nvrtc.program_source(GEN / "ufunc_add.cu")
    bad = cu.replace("#define TL_UFUNC_add(self, other, alpha) ((self) + (alpha) * (other))",
                     "#define TL_UFUNC_add(self, other, alpha) ((self) + (alpha) * undefined_thing)")
    with pytest.raises(nvrtc.NvrtcError, match=r"kernels/ufunc/add\.h\(4\): error: identifier \"undefined_thing\""):
        nvrtc.compile_report("ufunc_add", bad, 90)
