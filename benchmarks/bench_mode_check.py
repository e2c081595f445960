"""What the torch-function mode check costs on the operator path.

Every generated entry point opens with `if _TF and (...) is not _GO: return r_`
(docs/FUNCTION_MODES.md).  This benchmark loads a second copy of the
generated bindings with those two lines removed and times both copies on the
same 1-element calls, interleaved, best of rounds (a busy shared machine
slows everything by a varying factor; A/B in one process keeps the
difference measurable).  It then shows the cost when a mode is active on
another thread only, and under a pass-through mode on this thread.
"""
from __future__ import annotations

import importlib.util
import os
import re
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torchlet as tl  # noqa: E402
from torchlet._generated import _ops  # noqa: E402
from torchlet.overrides import BaseTorchFunctionMode  # noqa: E402

from _harness import interleaved, machine_info  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "60"))
_CHECK = re.compile(r"^    if _TF and \(r_ := _tf(?:_args)?\(.*\)\) is not _GO:\n        return r_\n", re.M)


def _unchecked_bindings():
    """generated/python/_ops.py without the mode check, as its own module."""
    src = open(_ops.__file__).read()
    stripped, n = _CHECK.subn("", src)
    spec = importlib.util.spec_from_loader("torchlet._generated._ops_unchecked", loader=None)
    mod = importlib.util.module_from_spec(spec)
    exec(compile(stripped, "<_ops without the mode check>", "exec"), mod.__dict__)
    mod.bind(tl.Tensor)
    return mod, n


def main():
    plain, removed = _unchecked_bindings()
    a, b = tl.ones(1), tl.ones(1)
    cases = {
        "a + b (Tensor.__add__)": (lambda m: (lambda: m._d__add__(a, b))),
        "torchlet.rsqrt(a)": (lambda m: (lambda: m.rsqrt(a))),
        "a.relu()": (lambda m: (lambda: m._m_relu(a))),
        "a.sum() (2 overloads)": (lambda m: (lambda: m._m_sum(a))),
        "torchlet.add(a, b, alpha=2)": (lambda m: (lambda: m.add(a, b, alpha=2))),
    }
    print(f"\n## the mode check on the operator path ({machine_info()}, {removed} checks removed in the copy)")
    print(f"{'case':<30} {'no check':>10} {'with check':>11} {'check':>9}")
    for name, make in cases.items():
        t = interleaved({"plain": make(plain), "checked": make(_ops)}, rounds=ROUNDS, min_time=0.004)
        d = t["checked"] - t["plain"]
        print(f"{name:<30} {t['plain'] * 1e9:8.0f} ns {t['checked'] * 1e9:8.0f} ns {d * 1e9:+6.0f} ns "
              f"({d / t['plain'] * 100:+.1f}%)")

    # a mode on another thread: this thread reads its (empty) stack and runs on
    stop, ready = threading.Event(), threading.Event()

    def hold():
        with BaseTorchFunctionMode():
            ready.set()
            stop.wait()

    th = threading.Thread(target=hold)
    th.start()
    ready.wait()
    t_other = interleaved({"plain": lambda: plain._d__add__(a, b), "checked": lambda: _ops._d__add__(a, b)},
                          rounds=ROUNDS)
    stop.set()
    th.join()
    with BaseTorchFunctionMode():
        t_mode = interleaved({"plain": lambda: plain._d__add__(a, b), "checked": lambda: _ops._d__add__(a, b)},
                             rounds=ROUNDS)
    print(f"\n  a + b while another thread has a mode: {t_other['checked'] * 1e9:.0f} ns "
          f"(+{(t_other['checked'] - t_other['plain']) * 1e9:.0f} ns: the thread-local stack lookup)")
    print(f"  a + b under a pass-through mode on this thread: {t_mode['checked'] * 1e9:.0f} ns "
          f"(+{(t_mode['checked'] - t_mode['plain']) * 1e9:.0f} ns: the mode's Python handler)")


if __name__ == "__main__":
    main()
