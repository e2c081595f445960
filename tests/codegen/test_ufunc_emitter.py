"""The ufunc emitter (codegen/emit/ufunc.py): dtype sets, key precedence,
formula lookup, diagnostics, and the shape of the generated loops."""
from __future__ import annotations

import textwrap

import pytest

from codegen.diagnostics import CodegenError, Pos
from codegen.emit import EmitContext
from codegen.emit import ufunc as U
from codegen.model import Inputs, load_model
from codegen.native import UfuncInnerLoop, UfuncKey
from codegen.templating import make_environment

WHERE = Pos("x.yaml", 1, 1)


def test_dtype_sets_complex():
    """complex sets name complex64 / complex128 (ComplexHalf: none); dtype_formulas keeps them only
    for formulas marked `ufunc_complex: yes`"""
    errs: list = []
    assert U.dtype_names(("AllAndComplex", "BFloat16", "Half", "ComplexHalf"), WHERE, errs) == [
        "Byte", "Char", "Short", "Int", "Long", "Float", "Double", "ComplexFloat", "ComplexDouble", "BFloat16",
        "Half"]
    loops = (UfuncInnerLoop(UfuncKey.Generic, "add", ("AllAndComplex",)),)
    safe = {"add": U.Formula("add", ("a", "b", "alpha"), "kernels/ufunc/add.h", complex_ok=True)}
    unsafe = {"add": U.Formula("add", ("a", "b", "alpha"), "kernels/ufunc/add.h")}
    assert "ComplexFloat" in U.dtype_formulas(loops, WHERE, [], safe)
    assert "ComplexFloat" not in U.dtype_formulas(loops, WHERE, [], unsafe)
    assert U.dtype_names(("Floating", "Bool"), WHERE, errs) == ["Float", "Double", "Bool"]
    assert not errs
    U.dtype_names(("Floaty",), WHERE, errs)
    assert "unknown dtype or dtype set 'Floaty'" in errs[0].message


def test_key_precedence():
    loops = (UfuncInnerLoop(UfuncKey.Generic, "add", ("All", "Bool")),
             UfuncInnerLoop(UfuncKey.ScalarOnly, "add_bool", ("Bool",)))
    got = U.dtype_formulas(loops, WHERE, [])
    assert got["Bool"] == "add_bool" and got["Float"] == "add"


def _emit(tmp_path, yaml_text):
    nf = tmp_path / "native_functions.yaml"
    nf.write_text(textwrap.dedent(yaml_text))
    dv = tmp_path / "derivatives.yaml"
    dv.write_text("")
    m = load_model(Inputs(str(nf), str(dv)))
    ctx = EmitContext(m, make_environment(), ("native_functions.yaml",), "0" * 16)
    return U.emit_ufunc_kernels(ctx)


ADD = """
- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  structured_delegate: add.out
- func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
  structured: True
  ufunc_inner_loop:
    Generic: add ({dtypes})
"""


def test_expansion(tmp_path):
    files = _emit(tmp_path, ADD.format(dtypes="Float, Half, Bool"))
    c = files["kernels/ufunc_add.c"]
    h = files["kernels/ufunc_add.h"]
    assert "from: native_functions.yaml: add.out(" in c
    assert "formula: kernels/ufunc/add.h" in c
    # one loop per listed dtype, NULL elsewhere in the table
    assert "TL_KNAME(ufunc_add_f32)" in c and "TL_KNAME(ufunc_add_f16)" in c and "TL_KNAME(ufunc_add_b)" in c
    assert "ufunc_add_i32" not in c
    assert c.count("    0,\n") == 9   # the 12 dtypes, 3 listed
    # contiguous / broadcast-scalar fast paths on restrict pointers, then strided
    assert "float *restrict o = (float *)data[0];" in c
    assert "strides[1] == 0" in c and "strides[2] == 0" in c and "/* strided */" in c
    # float16 in float chunks, rounded once; alpha converted once per call
    assert "tl_f16_to_f32_n(b1, p1 + base, m);" in c and "tl_f32_to_f16_n(o + base, bo, m);" in c
    assert "ctx.alpha = tl_opmath_from_scalar(alpha, dt);" in c
    assert "int tl_impl_ufunc_add(tl_structured *s, tl_tensor *self, tl_tensor *other, tl_scalar alpha, tl_tensor *out)" in c
    assert "TL_DEFINE_STUB(tl_ufunc_add_stub, tl_ufunc_add_table)" in c
    assert "tl_ufunc_add_ctx" in h and "int tl_ufunc_add_run(tl_iter *it, tl_scalar alpha);" in h


def test_standalone_formula_relu(tmp_path):
    files = _emit(tmp_path, ADD.format(dtypes="Float"))
    assert "kernels/ufunc_relu.c" in files
    c = files["kernels/ufunc_relu.c"]
    assert "standalone kernel" in c and "tl_impl_" not in c and "ufunc_relu_bf16" in c
    d = files["kernels/ufunc_div_floor.c"]
    assert "TL_UFUNC_div_floor_int" in d and "TL_UFUNC_div_floor(" in d and "ufunc_div_floor_b)" not in d


def test_errors(tmp_path):
    with pytest.raises(CodegenError) as e:
        _emit(tmp_path, ADD.format(dtypes="Float, Floaty"))
    assert "unknown dtype or dtype set 'Floaty'" in str(e.value.render() if hasattr(e.value, "render") else e.value)
    bad = ADD.format(dtypes="Float").replace("Generic: add (", "Generic: nosuch (")
    with pytest.raises(CodegenError) as e:
        _emit(tmp_path, bad)
    text = e.value.render() if hasattr(e.value, "render") else str(e.value)
    assert "no ufunc formula 'nosuch'" in text and "kernels/ufunc/nosuch.h" in text
    arity = ADD.format(dtypes="Float").replace("Generic: add (", "Generic: mul (")
    with pytest.raises(CodegenError) as e:
        _emit(tmp_path, arity)
    text = e.value.render() if hasattr(e.value, "render") else str(e.value)
    assert "TL_UFUNC_mul" in text and "takes 2 arguments but 'add.out' passes 3" in text


def test_repository_kernels_current():
    """generated/kernels matches what the emitter produces now (CI also runs make check-generated)."""
    from pathlib import Path

    root = Path(U.__file__).resolve().parents[2]
    names = sorted(p.name for p in (root / "generated" / "kernels").glob("ufunc_*.c"))
    assert {"ufunc_add.c", "ufunc_sub.c", "ufunc_mul.c", "ufunc_div.c", "ufunc_neg.c", "ufunc_relu.c"} <= set(names)


def test_result_dtype_compiles(tmp_path, monkeypatch):
    """A comparison-style formula: inputs in the loop's dtype, a
    bool result (`ufunc_result_dtype: Bool`); the generated file compiles
    warning-free for every capability."""
    import shutil
    import subprocess
    from pathlib import Path

    root = Path(U.__file__).resolve().parents[2]
    fdir = tmp_path / "ufunc"
    fdir.mkdir()
    shutil.copy(root / "kernels" / "ufunc" / "tl_ufunc.h", fdir)
    shutil.copy(root / "kernels" / "ufunc" / "tl_ustream.h", fdir)   # the streamed stores
    (fdir / "lt.h").write_text(
        "/* ufunc_inner_loop: Generic: lt (All, BFloat16, Half, Bool)\n"
        " * ufunc_result_dtype: Bool */\n"
        "#define TL_UFUNC_lt(self, other) ((self) < (other))\n")
    monkeypatch.setattr(U, "FORMULA_DIR", fdir)
    files = _emit(tmp_path, "- func: relu(Tensor self) -> Tensor\n")
    c = files["kernels/ufunc_lt.c"]
    assert "/* Half: TL_UFUNC_lt in float, stored as Bool */" in c
    assert "uint8_t *restrict o = (uint8_t *)data[0];" in c
    assert "strides[0] == (int64_t)sizeof(uint8_t) && strides[1] == (int64_t)sizeof(float)" in c
    assert "o[base + k] = (uint8_t)((TL_UFUNC_lt(x1, x2)) != 0);" in c
    gen = tmp_path / "gen"
    gen.mkdir()
    for name, text in files.items():
        (gen / Path(name).name).write_text(text)
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler")
    for cap, flags in (("DEFAULT", []), ("AVX2", ["-mavx2", "-mfma", "-mf16c"]),
                       ("AVX512", ["-mavx512f", "-mavx512vl", "-mavx512bw", "-mavx512dq", "-mf16c", "-mfma"])):
        r = subprocess.run([cc, "-std=gnu11", "-O1", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-fwrapv",
                            f"-DCPU_CAPABILITY={cap}", *flags, f"-I{root / 'runtime' / 'include'}", f"-I{fdir}",
                            f"-I{gen}", str(gen / "ufunc_lt.c")], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr


def test_editing_one_entry_changes_only_its_files(tmp_path):
    two = ADD.format(dtypes="Float, Int") + """
- func: mul.Tensor(Tensor self, Tensor other) -> Tensor
  structured_delegate: mul.out
- func: mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  ufunc_inner_loop:
    Generic: mul (Float)
"""
    before = _emit(tmp_path, two)
    # add a dtype to add, and push mul down the file (its line numbers change)
    after = _emit(tmp_path, "\n\n" + two.replace("add (Float, Int)", "add (Float, Int, Long)"))
    changed = sorted(k for k in before if before[k] != after.get(k))
    assert changed == ["cuda/ufunc_add.cu", "cuda/ufunc_add_cuda.c", "kernels/ufunc_add.c", "kernels/ufunc_add.h"]


WHERE_LIKE = """
- func: pick.self(Tensor condition, Tensor self, Tensor other) -> Tensor
  structured_delegate: pick.self_out
- func: pick.self_out(Tensor condition, Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  ufunc_inner_loop:
    Generic: pick (All, Bool, BFloat16, Half)
- func: mac(Tensor self, Tensor t1, Tensor t2, *, Scalar value=1) -> Tensor
  structured_delegate: mac.out
- func: mac.out(Tensor self, Tensor t1, Tensor t2, *, Scalar value=1, Tensor(a!) out) -> Tensor(a!)
  structured: True
  ufunc_inner_loop:
    Generic: mac (Floating, Half)
"""


def _ternary_formulas(tmp_path, monkeypatch):
    """a where-style formula (a bool input beside two of the loop's dtype) and
    an addcmul-style one (three inputs plus a Scalar), in a private formula dir"""
    import shutil
    from pathlib import Path

    root = Path(U.__file__).resolve().parents[2]
    fdir = tmp_path / "ufunc"
    fdir.mkdir()
    shutil.copy(root / "kernels" / "ufunc" / "tl_ufunc.h", fdir)
    shutil.copy(root / "kernels" / "ufunc" / "tl_ustream.h", fdir)   # the streamed stores
    (fdir / "pick.h").write_text("/* ufunc_input_dtype: condition Bool\n * ufunc_error_name: pick_cpu */\n"
                                 "#define TL_UFUNC_pick(condition, self, other) ((condition) ? (self) : (other))\n")
    (fdir / "mac.h").write_text("/* ufunc_error_name: mac_cpu_out */\n"
                                "#define TL_UFUNC_mac(self, t1, t2, value) ((self) + (value) * (t1) * (t2))\n")
    (fdir / "mac_alone.h").write_text("/* ufunc_inner_loop: Generic: mac (Float)\n * ufunc_scalar_args: value\n */\n")
    monkeypatch.setattr(U, "FORMULA_DIR", fdir)
    return root, fdir, _emit(tmp_path, WHERE_LIKE)


def test_ternary_fixed_input_dtype_and_fast_paths(tmp_path, monkeypatch):
    _, _, files = _ternary_formulas(tmp_path, monkeypatch)
    c = files["kernels/ufunc_pick.c"]
    # the condition is read as bool from uint8 storage in every loop, the
    # other inputs in the loop's dtype (float16 converted in chunks, the
    # condition element by element)
    assert ("strides[0] == (int64_t)sizeof(float) && strides[1] == (int64_t)sizeof(uint8_t) && "
            "strides[2] == (int64_t)sizeof(float) && strides[3] == (int64_t)sizeof(float)") in c
    assert "const bool x1 = (p1[k] != 0);" in c and "const float x2 = p2[k];" in c
    assert "const bool x1 = (p1[base + k] != 0);" in c and "tl_f16_to_f32_n(b2, p2 + base, m);" in c
    assert "tl_f16_to_f32_n(b1" not in c
    assert "const bool x1 = (*(const uint8_t *)(data[1] + k * strides[1]) != 0);" in c
    # every proper subset of the three inputs as broadcast scalars: 1 + 3 + 3 fast paths per loop
    f32 = c[c.index("TL_KNAME(ufunc_pick_f32)"):c.index("TL_KNAME(ufunc_pick_f64)")]
    assert f32.count("    if (strides[0] ==") == 7
    assert "strides[1] == 0 && strides[2] == 0 && strides[3] == (int64_t)sizeof(float)" in f32
    assert "const bool x1 = (*(const uint8_t *)data[1] != 0);" in f32
    # PyTorch's kernel name in the error
    assert '\\"pick_cpu\\" not implemented for' in c
    assert "int tl_impl_ufunc_pick(tl_structured *s, tl_tensor *condition, tl_tensor *self, tl_tensor *other, " \
           "tl_tensor *out)" in c


def test_ternary_scalar_arg_and_standalone(tmp_path, monkeypatch):
    _, _, files = _ternary_formulas(tmp_path, monkeypatch)
    c = files["kernels/ufunc_mac.c"]
    assert "TL_UFUNC_mac(x1, x2, x3, value)" in c and "ctx.value = tl_opmath_from_scalar(value, dt);" in c
    assert '\\"mac_cpu_out\\" not implemented for' in c
    s = files["kernels/ufunc_mac_alone.c"]
    assert "standalone kernel" in s and "int tl_ufunc_mac_alone_run(tl_iter *it, tl_scalar value)" in s
    # no error name in the standalone header: the default ufunc_<kernel>_cpu
    assert '\\"mac_alone_cpu\\" not implemented for' in s


def test_ternary_compiles(tmp_path, monkeypatch):
    """the generated where-style and addcmul-style files compile warning-free
    for every capability"""
    import shutil
    import subprocess
    from pathlib import Path

    root, fdir, files = _ternary_formulas(tmp_path, monkeypatch)
    gen = tmp_path / "gen"
    gen.mkdir()
    for name, text in files.items():
        (gen / Path(name).name).write_text(text)
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler")
    for src in ("ufunc_pick.c", "ufunc_mac.c", "ufunc_mac_alone.c"):
        for cap, flags in (("DEFAULT", []), ("AVX2", ["-mavx2", "-mfma", "-mf16c"]),
                           ("AVX512", ["-mavx512f", "-mavx512vl", "-mavx512bw", "-mavx512dq", "-mf16c", "-mfma"])):
            r = subprocess.run([cc, "-std=gnu11", "-O1", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-fwrapv",
                                f"-DCPU_CAPABILITY={cap}", *flags, f"-I{root / 'runtime' / 'include'}", f"-I{fdir}",
                                f"-I{gen}", str(gen / src)], capture_output=True, text=True)
            assert r.returncode == 0, (src, cap, r.stderr)


def test_unknown_input_dtype_is_a_diagnostic(tmp_path, monkeypatch):
    fdir = tmp_path / "ufunc"
    fdir.mkdir()
    (fdir / "bad.h").write_text("/* ufunc_input_dtype: condition Boolean */\n#define TL_UFUNC_bad(condition) (condition)\n")
    with pytest.raises(CodegenError) as e:
        U.read_formulas(fdir)
    assert "unknown ufunc_input_dtype 'Boolean'" in str(e.value.render() if hasattr(e.value, "render") else e.value)


def test_fallback_formula(tmp_path):
    """`ufunc_fallback: fast -> exact if slow`: per chunk the predicate first,
    then the vectorized formula or the checked one; the strided path checks
    each element; a fallback naming a missing formula is a diagnostic"""
    f = U.read_formulas()["fmod"]
    assert f.fallback == ("fmod_exact", "fmod_slow")
    lp = U._loop("fmod", f, U.BY_NAME["Float"], ["self", "other"], [])
    assert lp["fallback"]["pred"] == "TL_UFUNC_fmod_slow(x1, x2)"
    assert lp["fallback"]["call"] == "(TL_UFUNC_fmod_slow(x1, x2) ? TL_UFUNC_fmod_exact(x1, x2) : TL_UFUNC_fmod(x1, x2))"
    from pathlib import Path

    c = (Path(U.__file__).resolve().parents[2] / "generated" / "kernels" / "ufunc_fmod.c").read_text()
    body = c[c.index("ufunc_fmod_f32)"):c.index("ufunc_fmod_f64)")]
    assert "slow |= (TL_UFUNC_fmod_slow(x1, x2)) != 0;" in body and "if (!slow) {" in body
    assert "= (TL_UFUNC_fmod_slow(x1, x2) ? TL_UFUNC_fmod_exact(x1, x2) : TL_UFUNC_fmod(x1, x2));" in body
    assert "slow" not in c[c.index("ufunc_fmod_i32)"):c.index("ufunc_fmod_i64)")]   # integer formulas: none
    fdir = tmp_path / "ufunc"
    fdir.mkdir()
    (fdir / "bad.h").write_text("/* ufunc_fallback: bad -> bad_exact if bad_slow */\n#define TL_UFUNC_bad(x) (x)\n"
                                "#define TL_UFUNC_bad_slow(x) (x)\n")
    with pytest.raises(CodegenError) as e:
        U.read_formulas(fdir)
    assert "no formula TL_UFUNC_bad_exact" in str(e.value.render() if hasattr(e.value, "render") else e.value)


def test_large_outputs_are_streamed(tmp_path):
    """contiguous / broadcast paths of plain dtypes that move at least the store
    policy's stream_min_bytes per call write their output in aligned chunks with
    non-temporal stores (kernels/ufunc/tl_ustream.h); float16 chunks and the
    strided path keep plain stores"""
    c = _emit(tmp_path, ADD.format(dtypes="Float, Half"))["kernels/ufunc_add.c"]
    assert '#include "tl_ustream.h"' in c
    f32 = c[c.index("ufunc_add_f32)"):]
    f16 = c[c.index("ufunc_add_f16)"):c.index("ufunc_add_f32)")]
    # the bytes one call moves: output + the inputs that are not broadcast scalars
    policy = ">= tl_cpu_store_policy.stream_min_bytes"
    assert f32.count(f"n * (int64_t)(sizeof(float) + sizeof(float) + sizeof(float)) {policy}") == 1
    assert f32.count(f"n * (int64_t)(sizeof(float) + sizeof(float)) {policy}") == 2
    assert "const int64_t head = tl_ustream_head(o, n, (int64_t)sizeof(float));" in f32
    assert "tl_ustream_store(o + base, so, TL_USTREAM_CHUNK * (int64_t)sizeof(float));" in f32
    assert "tl_ustream_fence();" in f32
    assert "tl_ustream_store" not in f16
