"""Per-call cost of operator calls on 1-element float32 tensors, torchlet beside
PyTorch: the generated binding, torchlet.ops (one overload, and a packet that
resolves the overload), and a custom operator "scale(Tensor x, float alpha) ->
Tensor" (x * 2.0) three ways in torchlet:

  * custom_op with a Python body            (torch.library.custom_op)
  * Library.define + a Python impl          (torch.library.Library + impl)
  * Library.define + a C kernel             (no Python in the call path: the boxed
    kernel of tests/api/c_kernels/myc_kernels.c, compiled here with gcc, loaded with
    torchlet.library.load_library, registered with register_c_kernel; the row is
    skipped without gcc)

and the generated tl.mul(x, 2.0) for the same work. A second table times the
metadata calls and Python-number operands on the same 1-element tensor,
`a.view(1)`, `a[0]`, `a.t()`, `a + 2`, `2 - a` (the first three are Tensor's
CPython methods, torchlet/_fast.py), as torchlet's time / PyTorch's (goal:
at most 0.60, like `a + b`).

Columns: each library's time per call, its time / its own add(a, b) (what the
spelling costs over the plain binding), and "vs torch" = PyTorch's time /
torchlet's (above 1: torchlet faster). Every implementation of every row runs
round robin (benchmarks/_harness.py: interleaved), best of BENCH_ROUNDS rounds.
"""
from __future__ import annotations

import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests", "api", "c_kernels"))

import torchlet as tl  # noqa: E402
import torchlet.library as tlib  # noqa: E402

from _harness import interleaved, machine_info, torch  # noqa: E402
from build_c_kernels import compile_library  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "7"))
MIN_TIME = float(os.environ.get("BENCH_MIN_TIME", "0.03"))   # seconds per batch
SCHEMA = "scale(Tensor x, float alpha) -> Tensor"


def _torchlet_rows(keep: list) -> tuple[dict, str]:
    """{case: callable} for torchlet, and a note on the C row."""
    a, b = tl.ones(1), tl.ones(1)
    x = tl.ones(1)
    aten = tl.ops.aten

    @tlib.custom_op("benchco::scale", mutates_args=())
    def co_scale(x: tl.Tensor, alpha: float) -> tl.Tensor:
        return x * alpha

    py = tlib.Library("benchpy", "DEF")
    py.define(SCHEMA)
    py.impl("scale", lambda x, alpha: x * alpha, "CPU")
    keep += [co_scale, py]

    rows = {
        "add(a, b)": lambda: tl.add(a, b),
        "ops.aten.add.Tensor(a, b)": lambda: aten.add.Tensor(a, b),
        "ops.aten.add(a, b) (packet)": lambda: aten.add(a, b),
        "mul(x, 2.0) (generated)": lambda: tl.mul(x, 2.0),
        "custom_op, Python body": lambda: co_scale(x, 2.0),
        "Library + Python impl": lambda: tl.ops.benchpy.scale(x, 2.0),
    }
    tmp = tempfile.mkdtemp(prefix="bench_ops_call_")
    try:
        so = compile_library(tmp)
    except RuntimeError as e:
        return rows, f"C kernel row skipped: {e}"
    if so is None:
        return rows, "C kernel row skipped: gcc is not installed"
    handle = tlib.load_library(so)
    c = tlib.Library("myc", "DEF")
    c.define(SCHEMA)
    tlib.register_c_kernel("myc::scale", "CPU", handle.myc_scale_boxed, lib=c, name="myc_scale_boxed")
    keep += [handle, c]
    myc = tl.ops.myc
    rows["Library + C kernel"] = lambda: myc.scale(x, 2.0)
    rows["Library + C kernel, .default"] = lambda: myc.scale.default(x, 2.0)
    return rows, f"C kernel: {so.name} built by gcc from tests/api/c_kernels/myc_kernels.c"


def _torch_rows(keep: list) -> dict:
    a, b = torch.ones(1), torch.ones(1)
    x = torch.ones(1)
    aten = torch.ops.aten

    @torch.library.custom_op("benchco::scale", mutates_args=())
    def co_scale(x: torch.Tensor, alpha: float) -> torch.Tensor:
        return x * alpha

    py = torch.library.Library("benchpy", "DEF")
    py.define(SCHEMA)
    py.impl("scale", lambda x, alpha: x * alpha, "CPU")
    keep += [co_scale, py]
    return {
        "add(a, b)": lambda: torch.add(a, b),
        "ops.aten.add.Tensor(a, b)": lambda: aten.add.Tensor(a, b),
        "ops.aten.add(a, b) (packet)": lambda: aten.add(a, b),
        "mul(x, 2.0) (generated)": lambda: torch.mul(x, 2.0),
        "custom_op, Python body": lambda: co_scale(x, 2.0),
        "Library + Python impl": lambda: torch.ops.benchpy.scale(x, 2.0),
    }


def _small_rows(lib) -> dict:
    """The per-call goal rows: views and Python numbers on a 1-element float32 tensor."""
    a, b = lib.ones(1), lib.ones(1)
    return {
        "a + b": lambda: a + b,
        "a.view(1)": lambda: a.view(1),
        "a[0]": lambda: a[0],
        "a.t()": lambda: a.t(),
        "a + 2": lambda: a + 2,
        "2 - a": lambda: 2 - a,
    }


def _print_small(rounds: int) -> None:
    rows_tl = _small_rows(tl)
    rows_th = _small_rows(torch) if torch is not None else {}
    for case, fn in rows_tl.items():  # each computes what PyTorch does before it is timed
        want = rows_th[case]() if rows_th else None
        got = fn()
        assert want is None or (tuple(got.shape) == tuple(want.shape) and got.item() == want.item()), case
    fns = {("torchlet", k): f for k, f in rows_tl.items()}
    fns.update({("torch", k): f for k, f in rows_th.items()})
    t = interleaved(fns, rounds=rounds, min_time=MIN_TIME)
    print(f"\n## views and Python-number operands, 1-element float32, per call (best of {rounds} interleaved "
          "rounds; goal: torchlet / torch <= 0.60)")
    print(f"# {machine_info()}")
    head = f"{'case':<14} {'torchlet':>10} {'torch':>10} {'torchlet / torch':>17}"
    print(head)
    print("-" * len(head))
    for case in rows_tl:
        mine, theirs = t[("torchlet", case)], t.get(("torch", case))
        line = f"{case:<14} {mine * 1e9:8.0f}ns"
        line += f" {theirs * 1e9:8.0f}ns {mine / theirs:16.2f}" if theirs is not None else f" {'-':>10} {'-':>17}"
        print(line)


def _check(rows_tl: dict, rows_torch: dict) -> None:
    """Every spelling computes what it says (1 + 1, 1 * 2) before it is timed."""
    for case, fn in rows_tl.items():
        want = 2.0
        got = fn().item()
        assert got == want, (case, got)
        if case in rows_torch:
            assert rows_torch[case]().item() == want, case


def main():
    tl.set_num_threads(1)
    if torch is not None:
        torch.set_num_threads(1)
    keep: list = []    # libraries and handles stay registered while timing
    rows_tl, c_note = _torchlet_rows(keep)
    rows_torch = _torch_rows(keep) if torch is not None else {}
    _check(rows_tl, rows_torch)

    fns = {("torchlet", k): f for k, f in rows_tl.items()}
    fns.update({("torch", k): f for k, f in rows_torch.items()})
    t = interleaved(fns, rounds=ROUNDS, min_time=MIN_TIME)

    print(f"\n## operator calls, 1-element float32, per call (best of {ROUNDS} interleaved rounds)")
    print(f"# {machine_info()}, torchlet cpu capability {tl.get_cpu_capability()}, "
          f"torch {torch.__version__ if torch is not None else 'not installed'}")
    print(f"# {c_note}")
    w = 32
    head = f"{'case':<{w}} {'torchlet':>10} {'÷ tl.add':>9} {'torch':>10} {'÷ torch.add':>11} {'vs torch':>9}"
    print(head)
    print("-" * len(head))
    tl_add = t[("torchlet", "add(a, b)")]
    th_add = t.get(("torch", "add(a, b)"))
    for case in rows_tl:
        mine = t[("torchlet", case)]
        theirs = t.get(("torch", case))
        line = f"{case:<{w}} {mine * 1e6:8.2f}us {mine / tl_add:8.2f}x"
        if theirs is None:
            line += f" {'-':>10} {'-':>11} {'-':>9}"
        else:
            line += f" {theirs * 1e6:8.2f}us {theirs / th_add:10.2f}x {theirs / mine:8.2f}x"
        print(line)
    c = t.get(("torchlet", "Library + C kernel"))
    if c is not None:
        py = t[("torchlet", "Library + Python impl")]
        line = (f"\n  C kernel vs Python impl in torchlet: {py / c:.2f}x faster "
                f"({(py - c) * 1e6:.2f} us of Python kernel per call)")
        if rows_torch:
            th_py = t[("torch", "Library + Python impl")]
            th_co = t[("torch", "custom_op, Python body")]
            line += (f"; vs PyTorch's Library + Python impl: {th_py / c:.2f}x, "
                     f"vs PyTorch's custom_op: {th_co / c:.2f}x")
        print(line)
    _print_small(ROUNDS)


if __name__ == "__main__":
    main()
