"""torchlet.compile beside eager torchlet, eager PyTorch and torch.compile
(Inductor), one thread by default, interleaved rounds (best of each).

    python benchmarks/bench_compile.py [--threads N] [--quick] [--no-inductor] [--cpu-time]
                                       [--only NAME,...] [--shapes RxC,...]

Rows: pointwise chains of 2/4/8 operators, the SwiGLU gate silu(a) * b,
RMSNorm, layer_norm, softmax(x * w), each forward (under no_grad) and
forward+backward, at 4x64 (per-call overhead), 256x1024 (in L2) and
16384x1024 (memory-bound) float32; the seeds' Transformer block. Columns:
milliseconds, then the ratios (above 1.0 the compiled torchlet is faster):
`vs eager` = eager torchlet / compiled torchlet, `vs torch` = eager PyTorch /
compiled torchlet, `vs inductor` = torch.compile / compiled torchlet.

PyTorch's CPU allocator returns large blocks to the system, so at
16384x1024 each of its operators page-faults its fresh 64 MiB output in:
that, more than arithmetic, is the gap to eager PyTorch there (torchlet's
allocator keeps large blocks).

Then compile times: a cold compile (a fresh process with an empty cache)
of RMSNorm for torchlet and for torch.compile, torchlet's first call with a
warm disk cache in a fresh process, the cost of a new batch size, and the
kernels per call of each graph.

(--quick: the middle size only and no cold-compile processes;
--no-inductor: leave torch.compile out, whose first compile of each graph
takes seconds; --cpu-time: time each batch by the process's CPU time, which
other processes on a loaded machine disturb much less than wall time (one
thread); --only / --shapes: those workloads (names as printed) and sizes.)
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "examples"))

import numpy as np  # noqa: E402

import torchlet as tl  # noqa: E402

import seed_workloads as S  # noqa: E402
from _harness import interleaved, machine_info, thread_counts, torch  # noqa: E402

SHAPES = [(4, 64), (256, 1024), (16384, 1024)]


def workloads(lib):
    F = lib.nn.functional

    def chain(n):
        def f(x, w):
            y = x
            for i in range(n):
                y = y * w + 0.5 if i % 2 == 0 else (y - w) * 0.9
            return y
        return f

    def swiglu(x, w):
        return F.silu(x) * w

    def rmsnorm(x, w):
        return x * lib.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w

    def layer_norm(x, w):
        return F.layer_norm(x, (x.shape[-1],), w, w)

    def softmax(x, w):
        return F.softmax(x * w, -1)

    return {"chain2": chain(2), "chain4": chain(4), "chain8": chain(8), "silu(a)*b": swiglu,
            "rmsnorm": rmsnorm, "layer_norm": layer_norm, "softmax(x*w)": softmax}


def _pair(lib, x, w, grad):
    xs = lib.tensor(x)
    ws = lib.tensor(w)
    if grad:
        xs.requires_grad_(True)
        ws.requires_grad_(True)
    return xs, ws


def _fwd(lib, f, x, w):
    def run():
        with lib.no_grad():
            return f(x, w)
    return run


def _fwd_bwd(f, x, w, g):
    def run():
        x.grad = None
        w.grad = None
        f(x, w).backward(g)
    return run


def _option(name: str):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv[:-1] else None


CLOCK = time.process_time if "--cpu-time" in sys.argv else time.perf_counter


def bench_rows(shapes, inductor: bool):
    ours, theirs = workloads(tl), workloads(torch) if torch is not None else {}
    only = _option("--only")
    if only:
        ours = {k: v for k, v in ours.items() if k in only.split(",")}
    print(f"{'case':<30} {'eager':>10} {'compiled':>10} {'torch':>10} {'inductor':>10}"
          f" {'vs eager':>9} {'vs torch':>9} {'vs inductor':>11} {'kernels':>8}")
    rng = np.random.default_rng(0)
    for shape in shapes:
        x = rng.standard_normal(shape).astype(np.float32)
        w = rng.standard_normal(shape[-1]).astype(np.float32)
        g = rng.standard_normal(shape).astype(np.float32)
        for name in ours:
            for grad in (False, True):
                xl, wl = _pair(tl, x, w, grad)
                tl.compiler.reset()
                cf = tl.compile(ours[name])
                fns = {}
                if grad:
                    gl = tl.tensor(g)
                    fns["eager"] = _fwd_bwd(ours[name], xl, wl, gl)
                    fns["compiled"] = _fwd_bwd(cf, xl, wl, gl)
                else:
                    fns["eager"] = _fwd(tl, ours[name], xl, wl)
                    fns["compiled"] = _fwd(tl, cf, xl, wl)
                if torch is not None:
                    xt, wt = _pair(torch, x, w, grad)
                    gt = torch.tensor(g)
                    fns["torch"] = _fwd_bwd(theirs[name], xt, wt, gt) if grad else _fwd(torch, theirs[name], xt, wt)
                    if inductor:
                        torch._dynamo.reset()    # each row compiles afresh (Dynamo caches by code object)
                        ct = torch.compile(theirs[name])
                        fns["inductor"] = _fwd_bwd(ct, xt, wt, gt) if grad else _fwd(torch, ct, xt, wt)
                t = interleaved(fns, rounds=5, clock=CLOCK)
                e = cf.last_entry
                kernels = e.plan.kernel_count() + (e.backward.plan.kernel_count() if e.backward else 0)
                case = f"{name} {'fwd+bwd' if grad else 'fwd'} {shape[0]}x{shape[1]}"
                line = f"{case:<30}" + "".join(f" {t[k] * 1e3:8.3f}ms" if k in t else f" {'-':>10}"
                                               for k in ("eager", "compiled", "torch", "inductor"))
                for k, wdt in (("eager", 9), ("torch", 9), ("inductor", 11)):
                    line += f" {t[k] / t['compiled']:{wdt - 1}.2f}x" if k in t else f" {'-':>{wdt}}"
                print(line + f" {kernels:>8}", flush=True)


def bench_block(inductor: bool):
    name, sizes = "transformer", S.SIZES["transformer"]
    rng = np.random.default_rng(1)
    arrays = S.make_inputs(name, sizes, rng)
    print(f"\n== the seeds' Transformer block {sizes}, forward + backward")
    fns = {}
    for label, lib, comp in (("eager", tl, None), ("compiled", tl, tl.compile), ("torch", torch, None),
                             ("inductor", torch, torch.compile if (torch is not None and inductor) else None)):
        if lib is None or (label == "inductor" and comp is None):
            continue
        ts = S.to_lib(lib, arrays)
        F = lib.nn.functional
        fwd = (lambda *a, lib=lib, F=F: S.forward(name, lib, F, a, sizes))
        fn = comp(fwd) if comp is not None else fwd

        def run(ts=ts, fn=fn):
            for t in ts[:-1]:
                t.grad = None
            fn(*ts[:-1]).backward(ts[-1])
        fns[label] = run
    t = interleaved(fns, rounds=5, clock=CLOCK)
    print("  " + "  ".join(f"{k} {v * 1e3:.2f} ms" for k, v in t.items()))
    print("  compiled vs eager {:.2f}x".format(t["eager"] / t["compiled"])
          + (", vs torch {:.2f}x".format(t["torch"] / t["compiled"]) if "torch" in t else "")
          + (", vs inductor {:.2f}x".format(t["inductor"] / t["compiled"]) if "inductor" in t else ""))


_COLD = textwrap.dedent("""
    import time, sys
    t0 = time.perf_counter()
    import {lib} as L
    t1 = time.perf_counter()
    L.set_num_threads(1)
    def rms(x, w):
        return x * L.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
    x, w = L.randn(256, 1024), L.randn(1024)
    c = L.compile(rms)
    with L.no_grad():
        t2 = time.perf_counter(); c(x, w); t3 = time.perf_counter()
        c(L.randn(300, 1024), w); t4 = time.perf_counter()
    print(f"{{t1 - t0:.3f}} {{t3 - t2:.3f}} {{t4 - t3:.3f}}")
""")


def _fresh(lib: str, cache: str) -> list:
    env = dict(os.environ, TORCHLET_CACHE_DIR=cache, TORCHINDUCTOR_CACHE_DIR=cache)
    r = subprocess.run([sys.executable, "-c", _COLD.format(lib=lib)], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        return None
    return [float(v) for v in r.stdout.split()]


def bench_compile_times(inductor: bool):
    print("\n== compile times (RMSNorm 256x1024, fresh processes)")
    with tempfile.TemporaryDirectory() as d:
        cold = _fresh("torchlet", d)
        warm = _fresh("torchlet", d)
        if cold:
            print(f"  torchlet: import {cold[0]:.2f} s; first call, empty cache {cold[1] * 1e3:.0f} ms; "
                  f"first call, warm disk cache {warm[1] * 1e3:.0f} ms; new batch size {cold[2] * 1e3:.1f} ms")
    if torch is not None and inductor:
        with tempfile.TemporaryDirectory() as d:
            cold = _fresh("torch", d)
            warm = _fresh("torch", d)
            if cold:
                print(f"  torch.compile: import {cold[0]:.2f} s; first call, empty cache {cold[1]:.2f} s; "
                      f"first call, warm cache {warm[1]:.2f} s; new batch size {cold[2] * 1e3:.0f} ms")


def main() -> None:
    threads = thread_counts([1])[0]
    tl.set_num_threads(threads)
    if torch is not None:
        torch.set_num_threads(threads)
    inductor = torch is not None and "--no-inductor" not in sys.argv
    quick = "--quick" in sys.argv
    print(f"# bench_compile: {machine_info()}, threads={threads}, capability {tl.get_cpu_capability()}, "
          f"clock {CLOCK.__name__}")
    shapes = _option("--shapes")
    shapes = [tuple(int(n) for n in sh.split("x")) for sh in shapes.split(",")] if shapes else None
    bench_rows(shapes or (SHAPES[1:2] if quick else SHAPES), inductor)
    if shapes or _option("--only"):
        return
    bench_block(inductor)
    if not quick:
        bench_compile_times(inductor)


if __name__ == "__main__":
    main()
