"""What the dispatcher's Python layers cost per call, torchlet beside PyTorch,
on 1-element float32 tensors:

  * `a + b` with no mode                      (the baseline every user pays)
  * `a + b` under one pass-through TorchDispatchMode
                                              (the handler calls func(*args, **kwargs))
  * `a + b` on FakeTensors inside FakeTensorMode (metadata only)

numpy has no counterpart (no dispatcher), so the columns are torchlet,
PyTorch, the ratio PyTorch / torchlet (above 1: torchlet faster) and each
row's cost over its library's own no-mode call. Every implementation of every
row runs round robin (benchmarks/_harness.py: interleaved), best of
BENCH_ROUNDS rounds.
"""
from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torchlet as tl  # noqa: E402
from torchlet._subclasses.fake_tensor import FakeTensorMode  # noqa: E402
from torchlet.utils._python_dispatch import TorchDispatchMode  # noqa: E402

from _harness import interleaved, machine_info, torch  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "7"))
MIN_TIME = float(os.environ.get("BENCH_MIN_TIME", "0.03"))


def _pass_through(base):
    class PassThrough(base):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))
    return PassThrough


def _rows(lib, Mode, FakeMode, keep: list) -> dict:
    a, b = lib.ones(1), lib.ones(1)
    mode = _pass_through(Mode)()
    fake = FakeMode()
    with fake:
        fa, fb = lib.empty(1), lib.empty(1)
    keep += [mode, fake]

    def under_mode():
        with mode:
            return a + b

    def on_fakes():
        with fake:
            return fa + fb

    def enter_exit():
        with mode:
            pass

    return {"a + b, no mode": lambda: a + b, "a + b, pass-through mode": under_mode,
            "enter + exit a mode": enter_exit, "fake a + b in FakeTensorMode": on_fakes}


def main():
    tl.set_num_threads(1)
    keep: list = []
    fns = {("torchlet", k): f for k, f in _rows(tl, TorchDispatchMode, FakeTensorMode, keep).items()}
    if torch is not None:
        torch.set_num_threads(1)
        from torch._subclasses.fake_tensor import FakeTensorMode as TorchFake
        from torch.utils._python_dispatch import TorchDispatchMode as TorchMode
        fns.update({("torch", k): f for k, f in _rows(torch, TorchMode, TorchFake, keep).items()})
    t = interleaved(fns, rounds=ROUNDS, min_time=MIN_TIME)
    print(f"\n## the Python dispatch layers, 1-element float32, per call (best of {ROUNDS} interleaved rounds)")
    print(f"# {machine_info()}, torch {torch.__version__ if torch is not None else 'not installed'}")
    w = 30
    head = f"{'case':<{w}} {'torchlet':>10} {'- no mode':>10} {'torch':>10} {'- no mode':>10} {'vs torch':>9}"
    print(head)
    print("-" * len(head))
    base_tl = t[("torchlet", "a + b, no mode")]
    base_th = t.get(("torch", "a + b, no mode"))
    for case in ("a + b, no mode", "a + b, pass-through mode", "enter + exit a mode",
                 "fake a + b in FakeTensorMode"):
        mine = t[("torchlet", case)]
        line = f"{case:<{w}} {mine * 1e6:8.2f}us {(mine - base_tl) * 1e6:8.2f}us"
        theirs = t.get(("torch", case))
        if theirs is None:
            line += f" {'-':>10} {'-':>10} {'-':>9}"
        else:
            line += f" {theirs * 1e6:8.2f}us {(theirs - base_th) * 1e6:8.2f}us {theirs / mine:8.2f}x"
        print(line)


if __name__ == "__main__":
    main()
