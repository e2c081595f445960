"""The dispatcher on its own: runtime/src/dispatch.c + runtime/src/ivalue.c,
compiled with a C harness (dispatch_harness.c) under ASan + UBSan and run one
scenario per test. The harness fakes tensors (a keyset and a number), so
these tests need neither the tensor runtime nor the Python extension.

The table-filling rules are checked against an independent Python model of
PyTorch's rules (expected_table below), for every subset of a set of
registrations reached through every permutation of registration and
deregistration order.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
INCLUDE = ROOT / "runtime" / "include"
OWN_SOURCES = [ROOT / "runtime" / "src" / "dispatch.c", ROOT / "runtime" / "src" / "ivalue.c",
               HERE / "dispatch_harness.c"]
ERROR_C = ROOT / "runtime" / "src" / "error.c"
ERROR_STUB = HERE / "error_stub.c"

GCC = shutil.which("gcc")
pytestmark = pytest.mark.skipif(GCC is None, reason="gcc is not available")

WARN = ["-Wall", "-Wextra"]
SAN = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=undefined"]


def _compile(out_dir: Path, flags: list[str], link: list[str], name: str) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    objs = []
    error_src = ERROR_C if ERROR_C.exists() else ERROR_STUB
    for src in OWN_SOURCES + [error_src]:
        obj = out_dir / (src.stem + ".o")
        # -Werror on our files; error.c belongs to the runtime and only has to compile
        werror = ["-Werror"] if src in OWN_SOURCES or src == ERROR_STUB else []
        cmd = [GCC, "-std=gnu11", *flags, *WARN, *werror, f"-I{INCLUDE}", "-c", str(src), "-o", str(obj)]
        r = subprocess.run(cmd, capture_output=True, text=True, env=clean_env())
        assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stderr}"
        objs.append(str(obj))
    exe = out_dir / name
    cmd = [GCC, *flags, *objs, "-pthread", *link, "-o", str(exe)]
    r = subprocess.run(cmd, capture_output=True, text=True, env=clean_env())
    assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stderr}"
    return exe


@pytest.fixture(scope="module")
def harness(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dispatch_harness")
    return _compile(out, ["-g", "-O1", *SAN], [], "harness_asan")


def clean_env() -> dict:
    """The environment for the harness: no sanitizer runtime preloaded by a caller
    (make asan-test preloads libasan into Python)."""
    return {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS")}


def run(exe: Path, scenario: str, *extra: str) -> str:
    env = clean_env()
    env["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0"
    env["UBSAN_OPTIONS"] = "halt_on_error=1:print_stacktrace=1"
    r = subprocess.run([str(exe), scenario, *extra], capture_output=True, text=True, env=env, timeout=300)
    if "LeakSanitizer has encountered a fatal error" in r.stderr:  # no ptrace in this sandbox
        env["ASAN_OPTIONS"] = "detect_leaks=0"
        r = subprocess.run([str(exe), scenario, *extra], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, f"{scenario} exited {r.returncode}\nstdout:\n{r.stdout[-4000:]}\nstderr:\n{r.stderr[-4000:]}"
    assert "runtime error" not in r.stderr, r.stderr  # UBSan
    assert "ERROR: AddressSanitizer" not in r.stderr, r.stderr
    assert f"PASS {scenario}" in r.stdout
    return r.stdout


def block(out: str, tag: str) -> list[str]:
    return re.findall(re.escape(tag) + r"<<(.*?)>>", out, re.S)


# ----------------------------------------------------------------- scenarios

def test_priority(harness):
    run(harness, "priority")


def test_tls_include_exclude(harness):
    run(harness, "tls")


def test_thread_locality_and_racing_lookups(harness):
    run(harness, "threads")


def test_fallthrough(harness):
    run(harness, "fallthrough")


def test_backend_fallback(harness):
    run(harness, "fallback")


def test_boxed_and_unboxed_calls_agree(harness):
    out = run(harness, "boxed_unboxed")
    rows = re.findall(r"(cpu|meta) alpha#\d unboxed=(\S+) boxed=(\S+)", out)
    assert len(rows) == 6
    assert all(u == b for _, u, b in rows)
    assert [u for _, u, _ in rows[:3]] == ["3.75", "2.625", "-5.25"]


def test_redispatch(harness):
    out = run(harness, "redispatch")
    assert "trace AutogradCPU,Python,CPU" in out


def test_python_like_kernel_with_ctx(harness):
    run(harness, "python_kernel")


def test_bad_input_is_an_error_not_a_crash(harness):
    run(harness, "bad_keys")


def test_schema_argument_counts(harness):
    run(harness, "schema")


def test_ivalue_stack(harness):
    run(harness, "ivalue")


REFERENCE_YAML = ROOT.parent / "shared" / "reference" / "pytorch-2.13" / "native_functions.yaml"


def test_every_pytorch_schema_counts_like_the_codegen_parser(harness, tmp_path):
    """tl_op_define reads argument/return counts from PyTorch's schemas the
    same way codegen's FunctionSchema parser does (an independent parser)."""
    if not REFERENCE_YAML.exists():
        pytest.skip("PyTorch reference native_functions.yaml not present")
    schema_mod = pytest.importorskip("codegen.schema")
    schemas = [m.group(1).strip() for m in re.finditer(r"^- func: (.*)$", REFERENCE_YAML.read_text(), re.M)]
    assert len(schemas) > 2000
    listing = tmp_path / "schemas.txt"
    listing.write_text("\n".join(schemas) + "\n")
    out = run(harness, "schemas", str(listing))
    got = [line for line in out.splitlines() if not line.startswith("PASS")]
    assert len(got) == len(schemas)
    for schema, line in zip(schemas, got):
        fs = schema_mod.FunctionSchema.parse(schema)
        assert line == f"{len(list(fs.arguments.flat_all))} {len(fs.returns)}", schema


# ------------------------------------------------------------ exact texts

DEFAULT_FT = "fallthrough registered in torchlet runtime [backend fallback]"


def test_missing_kernel_message(harness):
    out = run(harness, "missing")
    (msg,) = block(out, "MSG")
    keys = ("[CPU, BackendSelect, Python, ADInplaceOrView, AutogradOther, AutogradCPU, "
            "AutogradCUDA, AutogradMeta, AutogradPrivateUse1, AutocastCPU, AutocastCUDA]")
    table = "CPU: add_cpu [kernel]\n" + "".join(
        f"{k}: {DEFAULT_FT}\n" for k in ["BackendSelect", "Python", "ADInplaceOrView", "AutogradOther",
                                         "AutogradCPU", "AutogradCUDA", "AutogradMeta",
                                         "AutogradPrivateUse1", "AutocastCPU", "AutocastCUDA"])
    assert msg == (
        "Could not run 'aten::add.Tensor' with arguments from the 'CUDA' backend. This could be "
        "because the operator doesn't exist for this backend, or was omitted during the "
        "selective/custom build process (if using custom build). 'aten::add.Tensor' is only "
        f"available for these backends: {keys}.\n\n{table}")
    (meta,) = block(out, "META")
    assert meta.startswith("aten::add.Tensor: attempted to run this operator with Meta tensors, but there was "
                           "no fake impl or Meta kernel registered.")
    (undef,) = block(out, "UNDEF")
    assert undef == (
        "There were no tensor arguments to this function (e.g., you passed an empty list of "
        "Tensors), but no fallback function is registered for schema aten::add.Tensor.  This "
        "usually means that this function requires a non-empty list of Tensors, or that you (the "
        "operator writer) forgot to register a fallback function.  Available functions are "
        f"{keys}.\n\n{table}")


def test_dump_table_text(harness):
    out = run(harness, "dump")
    (dump,) = block(out, "DUMP")
    assert dump == (
        "Undefined: add_composite [default backend kernel]\n"
        "CPU: add_cpu registered at generated/RegisterCPU.c:12 [kernel]\n"
        "CUDA: add_composite [default backend kernel]\n"
        "Meta: add_composite [default backend kernel]\n"
        "PrivateUse1: fallthrough fallthrough for tests [kernel]\n"
        f"BackendSelect: {DEFAULT_FT}\n"
        f"Python: {DEFAULT_FT}\n"
        f"ADInplaceOrView: {DEFAULT_FT}\n"
        "AutogradOther: add_autograd [autograd kernel]\n"
        "AutogradCPU: add_autograd [autograd kernel]\n"
        "AutogradCUDA: add_autograd [autograd kernel]\n"
        "AutogradMeta: add_autograd [autograd kernel]\n"
        "AutogradPrivateUse1: add_autograd [autograd kernel]\n"
        f"AutocastCPU: {DEFAULT_FT}\n"
        f"AutocastCUDA: {DEFAULT_FT}\n")
    (dump2,) = block(out, "DUMP2")
    # CompositeImplicitAutograd + a Meta kernel: AutogradMeta is not filled by
    # the decomposition (Meta has its own kernel), so it keeps the fallback
    assert dump2 == (
        "Undefined: relu6_math [math kernel]\n"
        "CPU: relu6_math [math kernel]\n"
        "CUDA: relu6_math [math kernel]\n"
        "Meta: relu6_meta [kernel]\n"
        "PrivateUse1: relu6_math [math kernel]\n"
        f"BackendSelect: {DEFAULT_FT}\n"
        f"Python: {DEFAULT_FT}\n"
        f"ADInplaceOrView: {DEFAULT_FT}\n"
        "AutogradOther: relu6_math [math kernel]\n"
        "AutogradCPU: relu6_math [math kernel]\n"
        "AutogradCUDA: relu6_math [math kernel]\n"
        f"AutogradMeta: {DEFAULT_FT}\n"
        "AutogradPrivateUse1: relu6_math [math kernel]\n"
        f"AutocastCPU: {DEFAULT_FT}\n"
        f"AutocastCUDA: {DEFAULT_FT}\n")
    (keys,) = block(out, "KEYS")
    assert keys == ("[CPU, CUDA, Meta, PrivateUse1, BackendSelect, Python, ADInplaceOrView, "
                    "AutogradOther, AutogradCPU, AutogradCUDA, AutogradMeta, AutogradPrivateUse1, "
                    "AutocastCPU, AutocastCUDA]")


def test_keyset_to_string(harness):
    out = run(harness, "keyset_string")
    assert block(out, "KS") == [
        "DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)",
        "DispatchKeySet()",
        "DispatchKeySet(CPU, CUDA, Meta, PrivateUse1, BackendSelect, Python, ADInplaceOrView, "
        "AutogradOther, AutogradCPU, AutogradCUDA, AutogradMeta, AutogradPrivateUse1, AutocastCPU, AutocastCUDA)",
        "DispatchKeySet(Meta, Python, ADInplaceOrView, AutogradMeta)",
    ]


# ------------------------------------- order independence vs. a reference model

RUNTIME_KEYS = ["CPU", "CUDA", "Meta", "PrivateUse1", "BackendSelect", "Python", "ADInplaceOrView",
                "AutogradOther", "AutogradCPU", "AutogradCUDA", "AutogradMeta", "AutogradPrivateUse1",
                "AutocastCPU", "AutocastCUDA"]
BACKENDS = ["CPU", "CUDA", "Meta", "PrivateUse1"]
AUTOGRAD = ["AutogradOther", "AutogradCPU", "AutogradCUDA", "AutogradMeta", "AutogradPrivateUse1"]
DEFAULT_FALLTHROUGH = ["BackendSelect", "Python", "ADInplaceOrView", *AUTOGRAD, "AutocastCPU", "AutocastCUDA"]

# must match k_perm_regs in dispatch_harness.c (bit i of a state = registration i present)
PERM_REGS = [
    ("CPU", "cpu_kernel", False),
    ("CompositeExplicitAutograd", "cea_kernel", False),
    ("CompositeImplicitAutograd", "cia_kernel", False),
    ("AutogradCPU", "autograd_cpu_kernel", False),
    ("CUDA", "cuda_fallthrough", True),
    ("Autograd", "autograd_kernel", False),
]


def expected_entry(key: str, regs: dict):
    """PyTorch's computeDispatchTableEntry, restated: (debug, provenance, fallthrough) or None."""
    def reg(k):
        return regs.get(k)

    is_backend = key in BACKENDS
    is_autograd = key in AUTOGRAD
    undefined = key == "Undefined"
    if not undefined and reg(key):
        return reg(key), "kernel"
    if (undefined or is_backend) and reg("CompositeExplicitAutograd"):
        return reg("CompositeExplicitAutograd"), "default backend kernel"
    if (undefined or is_backend or is_autograd) and reg("CompositeImplicitAutograd"):
        backend = key[len("Autograd"):] if is_autograd else None
        has_backend_kernel = is_autograd and (
            (backend in BACKENDS and reg(backend) is not None) or reg("CompositeExplicitAutograd") is not None)
        if not has_backend_kernel:
            return reg("CompositeImplicitAutograd"), "math kernel"
    if is_autograd and reg("Autograd"):
        return reg("Autograd"), "autograd kernel"
    if key in DEFAULT_FALLTHROUGH:
        return ("registered in torchlet runtime", True), "backend fallback"
    return None


def expected_state(mask: int) -> str:
    regs = {k: (debug, ft) for i, (k, debug, ft) in enumerate(PERM_REGS) if mask >> i & 1}
    lines, fallthrough = [], []
    for key in ["Undefined", *RUNTIME_KEYS]:
        e = expected_entry(key, regs)
        if e is None:
            continue
        (debug, ft), prov = e
        if ft and key == "Undefined":
            continue
        lines.append(f"{key}: {'fallthrough ' if ft else ''}{debug} [{prov}]\n")
        if ft:
            fallthrough.append(key)
    return "".join(lines) + f"FT DispatchKeySet({', '.join(fallthrough)})\n"


def test_registration_order_independence(harness):
    out = run(harness, "perm")
    assert "permutations 720 states 8641" in out
    states = dict(re.findall(r"STATE (\d+)\n(.*?)END\n", out, re.S))
    assert len(states) == 64
    for mask in range(64):
        assert states[str(mask)] == expected_state(mask), f"registration subset {mask:06b}"


# ----------------------------------------------------- build checks and bench

@pytest.mark.parametrize("std", ["gnu11", "c11"])
def test_sources_compile_warning_free(tmp_path, std):
    for src in OWN_SOURCES[:2]:
        cmd = [GCC, f"-std={std}", "-O3", "-fPIC", *WARN, "-Werror", "-pedantic", f"-I{INCLUDE}",
               "-c", str(src), "-o", str(tmp_path / (src.stem + ".o"))]
        r = subprocess.run(cmd, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr


def test_bench_runs(tmp_path):
    """ns per lookup (printed; speed is judged in benchmarks, not asserted here)."""
    exe = _compile(tmp_path, ["-O3"], [], "harness_bench")
    r = subprocess.run([str(exe), "bench"], capture_output=True, text=True, timeout=300, env=clean_env())
    assert r.returncode == 0, r.stdout + r.stderr
    assert "PASS bench" in r.stdout
    print(r.stdout)


def test_threads_under_thread_sanitizer(tmp_path):
    """Lookups racing registrations: no data race on the lock-free path."""
    try:
        exe = _compile(tmp_path, ["-g", "-O1", "-fsanitize=thread"], [], "harness_tsan")
    except AssertionError as e:  # no libtsan on this machine
        pytest.skip(f"cannot build with -fsanitize=thread: {str(e)[-200:]}")
    r = subprocess.run([str(exe), "threads"], capture_output=True, text=True, timeout=300, env=clean_env())
    if "FATAL: ThreadSanitizer" in r.stderr:  # e.g. unsupported memory layout in this sandbox
        pytest.skip(r.stderr.strip().splitlines()[0])
    assert "WARNING: ThreadSanitizer" not in r.stderr, r.stderr[-4000:]
    assert r.returncode == 0 and "PASS threads" in r.stdout, r.stdout + r.stderr
