"""The C emitters (codegen/emit/c_ops.py) and the ABI layer (codegen/api_c.py):
golden snippets of the generated C for a small operator set, the locality
of a one-entry YAML edit across generated/, and a warning-free compile of
the real generated tree."""
from __future__ import annotations

import difflib
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from codegen import api_c
from codegen.emit import EmitContext
from codegen.emit.c_ops import emit_c_ops
from codegen.model import Inputs, load_model
from codegen.schema import parse_schema
from codegen.templating import make_environment
from cgtest_util import declarations

REPO = Path(__file__).resolve().parents[2]

SMALL = textwrap.dedent(
    """\
    - func: foo.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
      variants: function, method
      structured_delegate: foo.out

    - func: foo_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)
      variants: method
      structured_delegate: foo.out

    - func: foo.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
      structured: True
      dispatch:
        CPU, CUDA: foo_out

    - func: bar(Tensor self, int[1]? dim=None, Scalar? sc=None, float? f=None, str? mode=None) -> Tensor
      dispatch:
        CPU, Meta: bar_k

    - func: cat(Tensor[] tensors, int dim=0) -> Tensor
      dispatch:
        CompositeExplicitAutograd: cat

    - func: two(Tensor self) -> (Tensor a, Tensor b)
      dispatch:
        CPU: two

    - func: pieces(Tensor self, int n) -> Tensor[]
      dispatch:
        CPU: pieces

    - func: nothing(Tensor(a!) self) -> ()
      dispatch:
        CPU: nothing

    - func: zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
      dispatch:
        CompositeExplicitAutograd: zeros
    """
)


def emit(tmp_path: Path, text: str) -> dict[str, str]:
    p = tmp_path / "native_functions.yaml"
    p.write_text(text)
    model = load_model(Inputs(str(p)))
    ctx = EmitContext(model, make_environment(), ("native_functions.yaml",), "test")
    return emit_c_ops(ctx)


def body(text: str) -> str:
    """A snippet from inside a C function body (one level of indentation)."""
    return textwrap.indent(textwrap.dedent(text), "    ")


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    return emit(tmp_path_factory.mktemp("small"), SMALL)


# ------------------------------------------------------------------ api_c

def test_names():
    f = parse_schema("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
    assert api_c.c_entry_name(f) == "tl_ops_add_Tensor"
    assert api_c.c_redispatch_name(f) == "tl_ops_add_Tensor_redispatch"
    assert api_c.op_handle_name(f) == "tl_ops_add_Tensor_op"
    assert api_c.kernel_typedef_name(f) == "tl_ops_add_Tensor_fn"
    assert api_c.qualified_name(f) == "aten::add.Tensor"
    assert api_c.unambiguous_name(parse_schema("add_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)")) == "add__Tensor"
    assert api_c.unambiguous_name(parse_schema("relu(Tensor self) -> Tensor")) == "relu"
    assert api_c.native_name("mul_out") == "tl_native_mul_out"
    assert api_c.impl_name("mul_out") == "tl_impl_mul_out"
    assert api_c.structured_kernel_name(f, "Meta") == "tl_structured_add_Tensor_Meta"
    assert api_c.kernel_typedef(f) == (
        "typedef tl_tensor *(*tl_ops_add_Tensor_fn)(tl_keyset ks, tl_tensor *self, tl_tensor *other, tl_scalar alpha);"
    )


@pytest.mark.parametrize(
    "typ, decl",
    [
        ("Tensor", "tl_tensor *x"),
        ("Tensor?", "tl_tensor *x"),
        ("Tensor[]", "tl_tensor *const *x, int64_t x_len"),
        ("Tensor?[]", "tl_tensor *const *x, int64_t x_len"),
        ("int", "int64_t x"),
        ("SymInt?", "int64_t x, bool x_has"),
        ("int[2]", "const int64_t *x, int64_t x_len"),
        ("int[1]?", "const int64_t *x, int64_t x_len"),
        ("float", "double x"),
        ("float?", "double x, bool x_has"),
        ("float[]?", "const double *x, int64_t x_len"),
        ("bool", "bool x"),
        ("bool?", "bool x, bool x_has"),
        ("Scalar", "tl_scalar x"),
        ("Scalar?", "const tl_scalar *x"),
        ("ScalarType?", "tl_dtype x"),
        ("Device?", "int x"),
        ("Layout?", "int x"),
        ("MemoryFormat", "int x"),
        ("str?", "const char *x"),
        ("Generator?", "tl_generator *x"),
    ],
)
def test_argument_types(typ, decl):
    f = parse_schema(f"op(Tensor self, {typ} x) -> Tensor")
    assert api_c.c_param_decls(api_c.c_params(f)[1:]) == decl


def test_returns_and_keywords():
    f = parse_schema("op(Tensor self, int default) -> (Tensor a, Tensor b)")
    assert api_c.c_signature(f) == "int tl_ops_op(tl_tensor *self, int64_t default_, tl_tensor **ret0, tl_tensor **ret1)"
    assert api_c.c_return(parse_schema("op(Tensor self) -> ()")).ctype == "int"
    assert api_c.c_signature(parse_schema("op(Tensor self) -> int")) == "int tl_ops_op(tl_tensor *self, int64_t *ret)"
    assert api_c.c_signature(parse_schema("op(Tensor self) -> Tensor[]")).endswith("tl_tensor ***ret, int64_t *ret_len)")
    # names the glue uses itself are renamed
    f = parse_schema("op(Tensor s, int ks, Scalar? st, Tensor ret0) -> Tensor")
    assert api_c.c_param_decls(api_c.c_params(f, with_ks=True)) == (
        "tl_keyset ks, tl_tensor *s_arg, int64_t ks_arg, const tl_scalar *st_arg, tl_tensor *ret0_arg"
    )
    with pytest.raises(api_c.UnsupportedCType, match="Dimname"):
        api_c.c_params(parse_schema("op(Tensor self, Dimname d) -> Tensor"))


# ------------------------------------------------------------- golden C

def test_file_layout(small):
    assert sorted(small) == [
        "cdef/ops.h", "csrc/ops_bar.c", "csrc/ops_cat.c", "csrc/ops_foo.c", "csrc/ops_nothing.c",
        "csrc/ops_pieces.c", "csrc/ops_two.c", "csrc/ops_zeros.c", "csrc/register_all.c",
        *(f"include/ops/{n}.h" for n in ("bar", "cat", "foo", "nothing", "pieces", "two", "zeros")),
        "include/tl_ops.h", "include/tl_ops_base.h",
    ]
    foo = small["csrc/ops_foo.c"]
    assert foo.startswith("/*\n * @generated by torchlet-gen")
    assert " *   foo.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor\n" in foo
    assert " *   foo.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)\n" in foo


def test_entry_point_and_redispatch(small):
    foo = small["csrc/ops_foo.c"]
    assert textwrap.dedent(
        """\
        tl_tensor *tl_ops_foo_Tensor(tl_tensor *self, tl_tensor *other, tl_scalar alpha) {
            tl_keyset ks;
            const tl_kernel *k_ = tl_op_select(tl_ops_foo_Tensor_op, tl_tensor_key_set(self) | tl_tensor_key_set(other), &ks);
            if (!k_) return NULL;
            if (k_->unboxed) return ((tl_ops_foo_Tensor_fn)k_->unboxed)(ks, self, other, alpha);
            return tl_ops_foo_Tensor_boxing_wrapper(k_, ks, self, other, alpha);
        }
        """
    ) in foo
    assert "tl_tensor *tl_ops_foo_Tensor_redispatch(tl_keyset ks, tl_tensor *self, tl_tensor *other, tl_scalar alpha) {\n" \
           "    const tl_kernel *k_ = tl_op_lookup(tl_ops_foo_Tensor_op, ks);\n" in foo
    cat = small["csrc/ops_cat.c"]
    assert "tl_op_select(tl_ops_cat_op, tl_glue_list_keyset(tensors, tensors_len), &ks)" in cat
    bar = small["csrc/ops_bar.c"]
    assert "tl_op_select(tl_ops_bar_op, tl_tensor_key_set(self), &ks)" in bar
    zeros = small["csrc/ops_zeros.c"]
    assert "tl_op_select(tl_ops_zeros_op, 0, &ks)" in zeros


def test_boxing(small):
    bar = small["csrc/ops_bar.c"]
    # boxing wrapper: schema order
    assert body(
        """\
            if (rc_ == 0) rc_ = tl_stack_push_tensor(&st_, self);
            if (rc_ == 0) rc_ = tl_glue_push_opt_int_list(&st_, dim, dim_len);
            if (rc_ == 0) rc_ = tl_glue_push_opt_scalar(&st_, sc);
            if (rc_ == 0) rc_ = tl_glue_push_opt_double(&st_, f, f_has);
            if (rc_ == 0) rc_ = tl_stack_push_string(&st_, mode);
            if (rc_ == 0) rc_ = tl_kernel_call_boxed(k_, tl_ops_bar_op, ks, &st_);
            if (rc_ == 0) rc_ = tl_stack_pop_tensor(&st_, &r_);
        """
    ) in bar
    # boxed adapter: reverse order, then the unboxed call and the releases
    assert body(
        """\
            if (rc_ == 0) rc_ = tl_glue_pop_list(st, TL_IV_STRING, 1, &mode_iv);
            if (rc_ == 0) rc_ = tl_glue_pop_opt_double(st, &f, &f_has);
            if (rc_ == 0) rc_ = tl_glue_pop_opt_scalar(st, &sc_v, &sc);
            if (rc_ == 0) rc_ = tl_glue_pop_list(st, TL_IV_INT_LIST, 1, &dim_iv);
            if (rc_ == 0) rc_ = tl_stack_pop_tensor(st, &self);
            if (rc_ == 0) {
                tl_tensor *r_ = ((tl_ops_bar_fn)k_->unboxed)(ks, self, dim_iv.u.ints.data, dim_iv.u.ints.len, sc, f, f_has, mode_iv.u.s);
                rc_ = r_ ? tl_stack_push_tensor_steal(st, r_) : -1;
            }
            tl_tensor_release(self);
            tl_ivalue_destroy(&dim_iv);
            tl_ivalue_destroy(&mode_iv);
            return rc_;
        """
    ) in bar
    two = small["csrc/ops_two.c"]
    assert "int tl_ops_two(tl_tensor *self, tl_tensor **ret0, tl_tensor **ret1) {" in two
    assert "    if (rc_ == 0) rc_ = tl_stack_pop_tensor(&st_, ret1);\n    if (rc_ == 0) rc_ = tl_stack_pop_tensor(&st_, ret0);\n" in two
    pieces = small["csrc/ops_pieces.c"]
    assert "int tl_ops_pieces(tl_tensor *self, int64_t n, tl_tensor ***ret, int64_t *ret_len) {" in pieces
    assert "    if (rc_ == 0) rc_ = tl_glue_pop_tensor_list_ret(&st_, ret, ret_len);\n" in pieces
    assert body(
        """\
            if (rc_ == 0) {
                tl_tensor **r_ = NULL;
                int64_t rn_ = 0;
                rc_ = ((tl_ops_pieces_fn)k_->unboxed)(ks, self, n, &r_, &rn_);
                if (rc_ == 0) {
                    rc_ = tl_stack_push_tensor_list(st, r_, rn_);
                    tl_tensor_list_free(r_, rn_);
                }
            }
        """
    ) in pieces
    nothing = small["csrc/ops_nothing.c"]
    assert "rc_ = ((tl_ops_nothing_fn)k_->unboxed)(ks, self);" in nothing


def test_structured_glue(small):
    foo = small["csrc/ops_foo.c"]
    assert textwrap.dedent(
        """\
        static tl_tensor *tl_structured_foo__Tensor_CPU(tl_keyset ks, tl_tensor *self, tl_tensor *other, tl_scalar alpha) {
            (void)ks;
            tl_structured s_;
            tl_structured_init(&s_, TL_STRUCTURED_INPLACE, TL_CPU, 0);
            if (tl_structured_propose(&s_, 0, self) != 0) goto fail;
            if (tl_meta_foo_Tensor(&s_, self, other, alpha) != 0) goto fail;
            if (!tl_structured_skip_impl(&s_) && tl_impl_foo_out(&s_, self, other, alpha, s_.outputs[0]) != 0) goto fail;
            return tl_structured_finish(&s_);
        fail:
            tl_structured_cleanup(&s_);
            return NULL;
        }
        """
    ) in foo
    assert "tl_structured_init(&s_, TL_STRUCTURED_OUT, TL_META, 1);\n    if (tl_structured_propose(&s_, 0, out) != 0) goto fail;\n" \
           "    if (tl_meta_foo_Tensor(&s_, self, other, alpha) != 0) goto fail;\n    return tl_structured_finish(&s_);" in foo
    assert "tl_structured_init(&s_, TL_STRUCTURED_FUNCTIONAL, TL_CPU, 0);" in foo
    # registrations: CPU, CUDA and Meta per variant
    assert body(
        """\
            if (TL_KERNEL_MISSING(tl_meta_foo_Tensor) || TL_KERNEL_MISSING(tl_impl_foo_out))  /* a hand-written kernel is missing: no CPU kernel */
                tl_glue_note_missing("aten::foo.out", "CPU", "tl_meta_foo_Tensor, tl_impl_foo_out");
            else if (tl_op_register_kernel(tl_ops_foo_out_op, TL_KEY_CPU, (void *)tl_structured_foo_out_CPU, tl_ops_foo_out_boxed, NULL,
                                           "tl_structured_foo_out_CPU registered at generated/csrc/ops_foo.c") < 0)
                return -1;
        """
    ) in foo
    assert "TL_KEY_META, (void *)tl_structured_foo_Tensor_Meta" in foo
    # CUDA (`CPU, CUDA: foo_out`): the hand-written tl_impl_foo_out_cuda, registered when it exists
    assert ('if (TL_KERNEL_MISSING(tl_meta_foo_Tensor) || TL_KERNEL_MISSING(tl_impl_foo_out_cuda))  '
            '/* a hand-written kernel is missing: no CUDA kernel */') in foo
    # ... through its device guard (PyTorch's OptionalDeviceGuard on self, then out, then other);
    # foo.out's default device_check (ExactSame) checks out, self and other first
    assert "TL_KEY_CUDA, (void *)tl_guarded_foo_out_CUDA" in foo
    assert textwrap.dedent(
        """\
        static tl_tensor *tl_guarded_foo_out_CUDA(tl_keyset ks, tl_tensor *self, tl_tensor *other, tl_scalar alpha, tl_tensor *out) {
            const tl_tensor *first_ = NULL;   /* device check: every tensor argument on one device */
            if (tl_cuda_check_device(&first_, out) != 0) return NULL;
            if (tl_cuda_check_device(&first_, self) != 0) return NULL;
            if (tl_cuda_check_device(&first_, other) != 0) return NULL;
            int dev_ = tl_cuda_device_of(self);
            if (dev_ < 0) dev_ = tl_cuda_device_of(out);
            if (dev_ < 0) dev_ = tl_cuda_device_of(other);
            tl_cuda_guard g_;
            if (tl_cuda_guard_enter(&g_, dev_) != 0) return NULL;
            tl_tensor *r_ = tl_structured_foo_out_CUDA(ks, self, other, alpha, out);
            tl_cuda_guard_exit(&g_);
            return r_;
        }
        """
    ) in foo
    assert '#include "tl_cuda_guard.h"' in foo and "tl_cuda_guard" not in small["csrc/ops_bar.c"]
    h = declarations(small)
    assert "TL_WEAK int tl_impl_foo_out_cuda(tl_structured *s, tl_tensor *self, tl_tensor *other, tl_scalar alpha, tl_tensor *out);" in h
    assert "TL_WEAK int tl_meta_foo_Tensor(tl_structured *s, tl_tensor *self, tl_tensor *other, tl_scalar alpha);" in h
    assert "TL_WEAK int tl_impl_foo_out(tl_structured *s, tl_tensor *self, tl_tensor *other, tl_scalar alpha, tl_tensor *out);" in h


def test_native_and_backend_select_registrations(small):
    bar = small["csrc/ops_bar.c"]
    assert "TL_KEY_CPU, (void *)tl_native_bar_k," in bar and "TL_KEY_META, (void *)tl_native_bar_k," in bar
    zeros = small["csrc/ops_zeros.c"]
    assert "TL_KEY_COMPOSITE_EXPLICIT_AUTOGRAD, (void *)tl_native_zeros," in zeros
    assert textwrap.dedent(
        """\
        static tl_tensor *tl_ops_zeros_backend_select(tl_keyset ks, const int64_t *size, int64_t size_len, tl_dtype dtype, int layout, int device, bool pin_memory, bool pin_memory_has) {
            ks = tl_glue_backend_select_keyset(ks, device);
            if (!ks) return NULL;
            return tl_ops_zeros_redispatch(ks, size, size_len, dtype, layout, device, pin_memory, pin_memory_has);
        }
        """
    ) in zeros
    assert "TL_KEY_BACKEND_SELECT, (void *)tl_ops_zeros_backend_select," in zeros
    h = declarations(small)
    assert "TL_WEAK tl_tensor *tl_native_bar_k(tl_keyset ks, tl_tensor *self, const int64_t *dim, int64_t dim_len, " \
           "const tl_scalar *sc, double f, bool f_has, const char *mode);" in h
    assert h.count("tl_native_bar_k(") == 1  # CPU and Meta share one prototype
    reg = small["csrc/register_all.c"]
    assert "    if (tl_ops_register_foo() != 0) return -1;\n    if (tl_ops_register_bar() != 0) return -1;\n" in reg
    cdef = small["cdef/ops.h"]
    assert "\n/* foo */\ntl_tensor *tl_ops_foo_Tensor(tl_tensor *self, tl_tensor *other, tl_scalar alpha);\n" in cdef


GUARDS = textwrap.dedent(
    """\
    - func: fa(Tensor self, Tensor other) -> Tensor
      device_check: NoCheck
      dispatch:
        CUDA: fa_cuda

    - func: fb.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)
      dispatch:
        CPU, CUDA: fb_out

    - func: fc(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
      dispatch:
        CPU, CUDA: fc

    - func: fd(Tensor(a) self, int[] size) -> Tensor(a)
      device_guard: False
      dispatch:
        CPU, CUDA: fd

    - func: fe(int n) -> Tensor
      dispatch:
        CPU, CUDA: fe
    """
)


def test_cuda_device_guards(tmp_path):
    """Every CUDA registration with ``device_guard`` (the default) runs under a
    generated guard whose device is PyTorch's choice; ``NoCheck`` drops the
    device check, ``device_guard: False`` and no device source drop the guard."""
    out = emit(tmp_path, GUARDS)
    fa = out["csrc/ops_fa.c"]
    assert "TL_KEY_CUDA, (void *)tl_guarded_fa_CUDA" in fa
    assert "first_" not in fa   # NoCheck
    assert "    int dev_ = tl_cuda_device_of(self);\n    if (dev_ < 0) dev_ = tl_cuda_device_of(other);\n" in fa
    assert "tl_tensor *r_ = tl_native_fa_cuda(ks, self, other);" in fa
    fb = out["csrc/ops_fb.c"]
    assert "TL_KEY_CPU, (void *)tl_native_fb_out," in fb   # the CPU registration stays unguarded
    assert "TL_KEY_CUDA, (void *)tl_guarded_fb_out_CUDA" in fb
    assert body(
        """\
        if (tl_cuda_check_device(&first_, out) != 0) return NULL;
        if (tl_cuda_check_device_list(&first_, tensors, tensors_len) != 0) return NULL;
        int dev_ = tl_cuda_device_of(out);
        if (dev_ < 0) dev_ = tl_cuda_device_of_list(tensors, tensors_len);
        """
    ) in fb
    fc = out["csrc/ops_fc.c"]   # a factory: its device argument
    assert "    int dev_ = tl_cuda_device_of_arg(device);\n" in fc and "first_" not in fc
    assert "TL_KEY_CUDA, (void *)tl_guarded_fc_CUDA" in fc
    for name in ("fd", "fe"):   # device_guard: False; no tensor and no device argument
        assert "tl_cuda_guard" not in out[f"csrc/ops_{name}.c"]
        assert f"TL_KEY_CUDA, (void *)tl_native_{name}," in out[f"csrc/ops_{name}.c"]


# ------------------------------------------------------------- locality

def _generate(tmp: Path, nf: Path, out: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "codegen", "generate", "--native-functions", str(nf),
         "--derivatives", str(REPO / "yaml/derivatives.yaml"), "--tags", str(REPO / "yaml/tags.yaml"), "--out", str(out)],
        cwd=REPO, capture_output=True, text=True,
    )
    assert r.returncode == 0, r.stderr


def _changed(a: Path, b: Path) -> dict[str, list[str]]:
    files = {p.relative_to(a).as_posix() for p in a.rglob("*") if p.is_file()}
    files |= {p.relative_to(b).as_posix() for p in b.rglob("*") if p.is_file()}
    out = {}
    for f in sorted(files):
        x = (a / f).read_text().splitlines() if (a / f).exists() else []
        y = (b / f).read_text().splitlines() if (b / f).exists() else []
        if x != y:
            out[f] = [l for l in difflib.unified_diff(x, y, lineterm="", n=0) if l[:1] in "+-" and l[:3] not in ("+++", "---")]
    return out


def _mine(f: str) -> bool:
    """A file the C glue emitter writes."""
    return f.startswith(("csrc/ops_", "include/ops/")) or f in ("csrc/register_all.c", "include/tl_ops.h", "cdef/ops.h")


def test_one_entry_edit_touches_only_what_it_feeds(tmp_path):
    src = (REPO / "yaml/native_functions.yaml").read_text()
    nf = tmp_path / "native_functions.yaml"
    nf.write_text(src)
    _generate(tmp_path, nf, tmp_path / "before")
    # 1. change the kernel of one entry
    old = "  dispatch:\n    CPU, CUDA, Meta: zero_\n"
    assert old in src
    nf.write_text(src.replace(old, "  dispatch:\n    CPU, CUDA, Meta: zero_kernel\n"))
    _generate(tmp_path, nf, tmp_path / "after")
    changed = _changed(tmp_path / "before", tmp_path / "after")
    assert {f for f in changed if _mine(f)} == {"csrc/ops_zero.c", "include/ops/zero.h"}, changed.keys()
    assert set(changed) <= {"csrc/ops_zero.c", "include/ops/zero.h", "docs/ops.md", "MANIFEST"}, changed.keys()
    assert changed["include/ops/zero.h"] == [
        "-TL_WEAK tl_tensor *tl_native_zero_(tl_keyset ks, tl_tensor *self);",
        "+TL_WEAK tl_tensor *tl_native_zero_kernel(tl_keyset ks, tl_tensor *self);",
    ]
    # 2. add one operator in the middle of the file: one new file and header, one
    # line of register_all.c and of tl_ops.h, one block of cdef/ops.h; the
    # entries after it move down without touching their files
    extra = ("- func: frobnicate(Tensor self) -> Tensor\n  variants: function\n"
             "  dispatch:\n    CompositeExplicitAutograd: frobnicate\n\n")
    anchor = "- func: view(Tensor(a) self"
    assert anchor in src
    nf.write_text(src.replace(anchor, extra + anchor, 1))
    _generate(tmp_path, nf, tmp_path / "added")
    changed = _changed(tmp_path / "before", tmp_path / "added")
    assert {f for f in changed if _mine(f)} == {"csrc/ops_frobnicate.c", "csrc/register_all.c", "include/tl_ops.h",
                                                "include/ops/frobnicate.h", "cdef/ops.h"}
    assert changed["include/tl_ops.h"] == ['+#include "ops/frobnicate.h"']
    # other emitters: only files named after the operator, and their registries / indexes
    for f in changed:
        assert _mine(f) or "frobnicate" in f or f in ("MANIFEST", "docs/ops.md", "cdef/python_abi.h") \
            or f.startswith("python/") or "register_all" in f or f.endswith("_ops.h"), f
    assert changed["csrc/register_all.c"] == ['+#include "ops/frobnicate.h"',
                                              "+    if (tl_ops_register_frobnicate() != 0) return -1;"]
    assert all(l.startswith("+") for f in ("include/ops/frobnicate.h", "cdef/ops.h") for l in changed[f])
    # the cffi module's warning wrapper of the entry point its binding calls
    assert changed.get("cdef/python_abi.h", []) in (
        [], ["+#define tl_ops_frobnicate(...) tl_pyabi_tensor(tl_ops_frobnicate(__VA_ARGS__))"])


# ------------------------------------------------------------- compiles

@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc")
def test_generated_tree_compiles_warning_free():
    incs = [REPO / "runtime/include", REPO / "autograd", REPO / "generated/include", REPO / "generated/cdef"]
    srcs = sorted((REPO / "generated/csrc").glob("*.c")) + [REPO / "runtime/src/structured.c"]
    srcs += [REPO / "kernels/native" / n for n in ("views.c", "factories.c", "copy_ops.c")]
    cmd = ["gcc", "-fsyntax-only", "-std=gnu11", "-Wall", "-Wextra", "-Werror", *[f"-I{i}" for i in incs]]
    for strict in ([], ["-DTL_STRICT_KERNELS"]):
        r = subprocess.run(cmd + strict + [str(s) for s in srcs], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[-4000:]


def test_unsupported_types_are_diagnostics(tmp_path):
    from codegen.diagnostics import CodegenError

    text = textwrap.dedent(
        """\
        - func: named(Tensor self, Dimname dim) -> Tensor
          dispatch:
            CPU: named
        """
    )
    with pytest.raises(CodegenError) as e:
        emit(tmp_path, text)
    (d,) = e.value.diagnostics
    assert d.line == 1 and "named argument 'dim': the C ABI has no convention for type 'Dimname'" in d.message


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc")
def test_small_set_compiles_warning_free(small, tmp_path):
    """Every boxing kind of the small set (lists, optionals, strings, several
    returns, Tensor[] returns, ()) is valid, warning-free C."""
    for path, text in small.items():
        p = tmp_path / path
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    incs = [REPO / "runtime/include", REPO / "autograd", tmp_path / "include", tmp_path / "cdef"]
    cmd = ["gcc", "-fsyntax-only", "-std=gnu11", "-Wall", "-Wextra", "-Werror", *[f"-I{i}" for i in incs]]
    srcs = sorted((tmp_path / "csrc").glob("*.c"))
    for strict in ([], ["-DTL_STRICT_KERNELS"]):
        r = subprocess.run(cmd + strict + [str(s) for s in srcs], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[-4000:]


CORPUS = REPO.parent / "shared/reference/pytorch-2.13"


@pytest.mark.skipif(not (CORPUS / "native_functions.yaml").is_file(), reason="PyTorch reference corpus not present")
def test_pytorch_corpus_generates_every_function():
    """Every one of PyTorch's 3,101 functions has a C convention: the emitter
    writes one ops file per operator name and raises nothing
    (tests/codegen/test_full_corpus.py compiles the result)."""
    model = load_model(Inputs(str(CORPUS / "native_functions.yaml"), None, str(CORPUS / "tags.yaml")))
    ctx = EmitContext(model, make_environment(), ("native_functions.yaml",), "test")
    files = emit_c_ops(ctx)
    names = {f.func.name.name.base if not f.func.name.name.dunder_method else f"__{f.func.name.name.base}__"
             for f in model.functions}  # fmt: skip
    assert {p for p in files if p.startswith("csrc/ops_")} == {f"csrc/ops_{n}.c" for n in names}
