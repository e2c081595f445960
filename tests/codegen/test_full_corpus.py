"""PyTorch 2.13's whole native_functions.yaml + derivatives.yaml generates,
and every generated C file compiles (``-fsyntax-only -Wall -Wextra -Werror``
with the project's include paths). Skipped without the reference corpus
(../shared/reference/pytorch-2.13) or a C compiler.

The compiles are unity batches (one translation unit #includes ~100
generated files, so the corpus's 2.8 MB of operator headers is parsed once per
batch, not once per file), run in parallel over the cores; a diagnostic
still names the generated file and line."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from cgtest_util import CORPUS, REPO, declarations, needs_corpus, run_cli

pytestmark = needs_corpus

CC = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
BATCH = 100


def _generate(out: Path, *extra: str):
    return run_cli(
        "generate", "--native-functions", str(CORPUS / "native_functions.yaml"),
        "--derivatives", str(CORPUS / "derivatives.yaml"), "--tags", str(CORPUS / "tags.yaml"),
        "--autocast", "", "--out", str(out), *extra,
    )  # fmt: skip


def syntax_check(out: Path, jobs: int | None = None) -> list[str]:
    """Compile every generated C file under ``out``; the compiler's messages of failed batches."""
    incs = [out / "include", out / "cdef", out / "csrc", REPO / "runtime/include", REPO / "kernels/ufunc",
            out / "kernels", REPO / "autograd", out / "cuda", REPO / "kernels/cuda"]  # fmt: skip
    base = [CC, "-std=gnu11", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", *[f"-I{i}" for i in incs]]
    groups: dict[str, list[Path]] = {}
    for f in sorted(out.rglob("*.c")):
        kind = "kernels" if f.parent.name == "kernels" else "cuda" if f.parent.name == "cuda" else (
            "autograd" if f.name.startswith("autograd") else "ops")
        groups.setdefault(kind, []).append(f)
    # ufunc kernel files include different math headers (tgmath.h vs tl_mvec.h): one unit each
    size = {"kernels": 1}
    batches = [(kind, fs[i : i + size.get(kind, BATCH)]) for kind, fs in groups.items()
               for i in range(0, len(fs), size.get(kind, BATCH))]  # fmt: skip
    tmp = Path(tempfile.mkdtemp(prefix="tl_corpus_cc_"))

    def run(i_batch):
        i, (kind, fs) = i_batch
        unit = tmp / f"unity_{i}.c"
        unit.write_text("".join(f'#include "{f}"\n' for f in fs))
        flags = ["-DCPU_CAPABILITY=DEFAULT", "-fwrapv"] if kind == "kernels" else []
        return subprocess.run([*base, *flags, str(unit)], capture_output=True, text=True)

    try:
        with ThreadPoolExecutor(jobs or os.cpu_count() or 2) as ex:
            results = list(ex.map(run, enumerate(batches)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return [r.stderr for r in results if r.returncode != 0]


@pytest.fixture(scope="module")
def corpus_out(tmp_path_factory):
    out = tmp_path_factory.mktemp("corpus")
    r = _generate(out, "--untranslated-derivatives", "not-implemented")
    assert r.returncode == 0, r.stderr[-4000:]
    return out, r


def test_every_function_generates(corpus_out):
    out, r = corpus_out
    assert "3101 operators" in r.stdout
    assert "derivatives.yaml formulas" in r.stderr  # the note: untranslated formulas are counted, not hidden
    from codegen.model import Inputs, load_model

    m = load_model(Inputs(str(CORPUS / "native_functions.yaml"), None, str(CORPUS / "tags.yaml")))
    text = declarations(out)
    for f in m.functions:  # every schema gets an entry point
        from codegen import api_c

        assert f" {api_c.c_entry_name(f)}(" in text or f"*{api_c.c_entry_name(f)}(" in text, f.func.name


def test_the_seven_gaps_have_conventions(corpus_out):
    out, _ = corpus_out
    text = declarations(out)
    # Scalar[], Storage, Stream, DeviceIndex, Tensor[] in tuples, several structured outputs, precomputed:
    assert "tl_ops__foreach_add_ScalarList(tl_tensor *const *self, int64_t self_len, const tl_scalar *scalars, int64_t scalars_len" in text
    assert "tl_ops_set__source_Storage(tl_tensor *self, tl_storage *source)" in text
    assert "int tl_ops_record_stream(tl_tensor *self, int64_t s_arg)" in text
    assert "int tl_ops__cufft_get_plan_cache_size(int64_t device_index, int64_t *ret)" in text
    assert "int tl_ops_histogramdd(tl_tensor *self, const int64_t *bins, int64_t bins_len, const double *range, int64_t range_len, tl_tensor *weight, bool density, tl_tensor **ret0, tl_tensor ***ret1, int64_t *ret1_len)" in text
    assert "typedef struct tl_precompute_cat_out { int64_t dim; int64_t valid; bool all_contiguous; bool all_same_dtype; bool all_same_sizes_and_stride; int memory_format; } tl_precompute_cat_out;" in text
    assert "TL_WEAK int tl_meta_cat(tl_structured *s, tl_tensor *const *tensors, int64_t tensors_len, int64_t dim, tl_precompute_cat_out *pre);" in text
    assert "TL_WEAK int tl_impl_cat_out_cpu(tl_structured *s, tl_tensor *const *tensors, int64_t tensors_len, const tl_precompute_cat_out *pre, tl_tensor *out);" in text
    lu = (out / "csrc/ops_linalg_lu.c").read_text()
    assert "tl_structured_propose(&s_, 2, U)" in lu
    assert "return tl_glue_structured_finish_n(&s_, 3, (tl_tensor **[]){ ret0, ret1, ret2 });" in lu
    assert "int tl_ops_result_type_Tensor(tl_tensor *tensor, tl_tensor *other, tl_dtype *ret)" in text
    # one C++ kernel name for overloads with different C signatures: the later ones are renamed
    assert "TL_WEAK tl_tensor *tl_native_add_relu___add_relu_Scalar(tl_keyset ks, tl_tensor *self, tl_scalar other, tl_scalar alpha)" in text


@pytest.mark.skipif(CC is None, reason="no C compiler")
def test_every_generated_c_file_compiles(corpus_out):
    out, _ = corpus_out
    n = len(list(out.rglob("*.c")))
    assert n > 2000
    failures = syntax_check(out)
    assert not failures, "\n".join(failures)[:20000]


def test_strict_mode_reports_untranslated_derivatives_only(tmp_path):
    """Without --untranslated-derivatives the corpus stops, and only at
    derivatives.yaml formulas the C formula compiler cannot translate (each
    with its file and line); every native function has a C convention."""
    r = _generate(tmp_path / "out")
    assert r.returncode == 1
    errors = [ln for ln in r.stderr.splitlines() if ": error: " in ln]
    assert errors
    assert all("derivatives.yaml:" in e and "cannot translate the derivative" in e for e in errors), errors[:5]
