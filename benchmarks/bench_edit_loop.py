"""The operator author's loop, timed in this checkout: add one pointwise
operator (a YAML entry and a ufunc formula), regenerate, rebuild, import and
call it; then take it out again and rebuild. Also times the CI check
(`make check-generated`: torchlet's generated/, the example library's and the
hand-written includes, side by side).

Each phase runs as the Makefile runs it, in a fresh interpreter:

    generate   python -m codegen generate
    build      python setup.py -q build_ext --inplace   (objects recompiled: from its output)
    import     python -c "import torchlet; torchlet.ops.aten.<op>(a, b)"

The operator is `edit_loop_probe(Tensor self, Tensor other)` (structured,
TensorIteratorBase, a Floating formula), the smallest real addition. The
checkout must be built (`make build`) and its yaml/ and kernels/ufunc/ clean:
the script restores both exactly and rebuilds before it exits, also on error.
Goal: one new pointwise operator from YAML edit to importable in <= 20 s on
2 cores; the check in <= 2 s. Prints the CPU model.

    .venv/bin/python benchmarks/bench_edit_loop.py
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import machine_info  # noqa: E402

NF = ROOT / "yaml" / "native_functions.yaml"
FORMULA = ROOT / "kernels" / "ufunc" / "edit_loop_probe.h"
PY = sys.executable

ENTRY = """
# ---- edit-loop probe (benchmarks/bench_edit_loop.py adds and removes it)
- func: edit_loop_probe.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
  device_check: NoCheck   # TensorIterator
  structured: True
  structured_inherits: TensorIteratorBase
  ufunc_inner_loop:
    Generic: edit_loop_probe (Floating, BFloat16, Half)
  tags: pointwise

- func: edit_loop_probe(Tensor self, Tensor other) -> Tensor
  device_check: NoCheck   # TensorIterator
  structured_delegate: edit_loop_probe.out
  variants: function
  tags: pointwise
"""

FORMULA_TEXT = """/* edit_loop_probe: self * other + self (benchmarks/bench_edit_loop.py) */
#define TL_UFUNC_edit_loop_probe(self, other) ((self) * (other) + (self))
"""

CALL = ("import torchlet as tl; a = tl.tensor([1.0, 2.0]); b = tl.tensor([3.0, 4.0]); "
        "r = tl.ops.aten.edit_loop_probe(a, b); assert r.tolist() == [4.0, 10.0], r")


def run(cmd: list[str]) -> tuple[float, str]:
    t = time.perf_counter()
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    dt = time.perf_counter() - t
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{p.stdout}\n{p.stderr}")
    return dt, p.stdout + p.stderr


def compiled(out: str) -> str:
    m = re.search(r"compiled (\d+) of (\d+) objects", out)
    return f"{m.group(1)} of {m.group(2)} objects" if m else "?"


def loop() -> list[tuple[str, float, str]]:
    rows = []
    gen, _ = run([PY, "-m", "codegen", "generate"])
    build, out = run([PY, "setup.py", "-q", "build_ext", "--inplace"])
    imp, _ = run([PY, "-c", CALL])
    rows.append(("generate", gen, ""))
    rows.append(("build", build, compiled(out)))
    rows.append(("import + call", imp, ""))
    rows.append(("edit -> importable", gen + build + imp, ""))
    return rows


def main() -> int:
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "yaml", "kernels/ufunc"], cwd=ROOT,
                           capture_output=True, text=True).stdout.strip()
    if dirty:
        print("bench_edit_loop: yaml/ or kernels/ufunc/ has uncommitted changes; commit or stash them first")
        return 2
    print(machine_info())
    print(f"cores: {os.cpu_count()}")
    check = min(run(["make", "-s", "check-generated"])[0] for _ in range(5))
    run([PY, "setup.py", "-q", "build_ext", "--inplace"])   # start from an up-to-date build
    original = NF.read_text()
    try:
        NF.write_text(original + ENTRY)
        FORMULA.write_text(FORMULA_TEXT)
        added = loop()
    finally:
        NF.write_text(original)
        FORMULA.unlink(missing_ok=True)
        t = time.perf_counter()
        run([PY, "-m", "codegen", "generate"])
        _, out = run([PY, "setup.py", "-q", "build_ext", "--inplace"])
        removed = time.perf_counter() - t
    print(f"\n{'phase':<22}{'seconds':>9}  note")
    for name, dt, note in added:
        print(f"{name:<22}{dt:>9.1f}  {note}")
    print(f"{'remove + rebuild':<22}{removed:>9.1f}  {compiled(out)}")
    print(f"{'make check-generated':<22}{check:>9.2f}  torchlet's, the example library's, the includes (goal <= 2 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
