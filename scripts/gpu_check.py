"""The one prepared GPU check (`make gpu-check`): run on a machine with an
NVIDIA GPU, it writes a JSON report and a table to $OUT (default ./gpu_check_out).

Steps (each recorded, a failure does not stop the next):
 1. versions: driver (cuDriverGetVersion), device name and compute capability,
    NVRTC (torchlet.cuda.nvrtc) and whether its major fits the driver's;
 2. the prebuilt kernel cache (TORCHLET_KERNEL_CACHE, filled here by
    `python -m torchlet.cuda.prebuild`): how many programs load from it with
    cuModuleLoadData (proves a CUBIN from this NVRTC loads on that driver);
 3. pytest tests/cuda against the real GPU;
 4. timings (CUDA events, median of 20): `a + b` on 2^28 float32 with torchlet vs
    a device-to-device copy of the same bytes vs torch.add, and the per-call
    time of a tiny `a + b` (torchlet vs torch);
 5. sum of 2^28 float32 (whole tensor and per row of 1024) and a 4096^2 mm in
    float32 / bfloat16 (cuBLAS), torchlet beside torch;
 6. the NN kernels (softmax / log_softmax backward, layer_norm forward and
    forward + backward) and cumsum on 8192 x 4096 float32: against torchlet's CPU
    kernels and timed beside torch;
 7. the seeds' Transformer block (examples/seed_workloads.py, B=8 T=128 D=256
    H=4), cross_entropy over 4096 x 1000 logits and an embedding of 32768 x 512,
    each forward + backward in float32: the output and every gradient against
    torchlet's CPU run and torch's CUDA run, timed beside torch.
 8. the other reductions (var / var_mean / std, logsumexp, max.dim values and
    indices, min, any / all, vector_norm of orders 2, inf and 3, prod, nansum,
    aminmax, count_nonzero) over
    rows, columns and the whole of 8192 x 4096 float32: against torchlet's
    CPU kernels and timed beside torch; argmax / sum / any / max.dim over
    2^31 + 4096 bytes (the splits past 32-bit offsets).

    python scripts/gpu_check.py [--dry-run] [--out DIR] [--numel N]

--dry-run needs no GPU: it checks the script's imports, NVRTC and the cache
folder, and writes the report with every GPU step marked "skipped".
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _driver():
    """(cuda.bindings.driver, device count) or (None, reason)"""
    try:
        from cuda.bindings import driver
        (err,) = driver.cuInit(0)
        if int(err) != 0:
            return None, f"cuInit: {err!r}"
        err, n = driver.cuDeviceGetCount()
        return (driver, n) if int(err) == 0 and n > 0 else (None, "no CUDA device")
    except Exception as e:  # no driver library: cuda.pathfinder raises
        return None, f"{type(e).__name__}: {e}"


def versions(report: dict) -> None:
    from torchlet.cuda import nvrtc

    v = report["versions"] = {"python": platform.python_version(), "machine": platform.machine()}
    try:
        v["nvrtc"] = "%d.%d" % nvrtc.version()
        v["nvrtc_archs"] = nvrtc.supported_archs()
    except Exception as e:
        v["nvrtc"] = f"unavailable: {e}"
    drv, n = _driver()
    if drv is None:
        v["driver"] = f"unavailable: {n}"
        return
    _, ver = drv.cuDriverGetVersion()
    _, dev = drv.cuDeviceGet(0)
    _, name = drv.cuDeviceGetName(64, dev)
    A = drv.CUdevice_attribute
    _, ma = drv.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev)
    _, mi = drv.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev)
    v.update(driver=ver, devices=n, device=name.split(b"\0")[0].decode(), cc=f"{ma}.{mi}")
    try:
        nvrtc.check_driver(ver)
        v["nvrtc_fits_driver"] = True
    except Exception as e:
        v["nvrtc_fits_driver"] = str(e)


def cache_load(report: dict, dry: bool) -> None:
    from torchlet.cuda import nvrtc, prebuild

    folder = nvrtc.cache_dir()
    r = report["cache"] = {"folder": str(folder), "programs": len(prebuild.programs())}
    if folder is None or not folder.is_dir():
        r["status"] = "no cache folder (set TORCHLET_KERNEL_CACHE to the prebuild output)"
        return
    r["files"] = len(list(folder.glob("*.cubin")))
    if dry:
        r["status"] = "skipped (dry run)"
        return
    drv, _ = _driver()
    if drv is None:
        r["status"] = "skipped (no GPU)"
        return
    _, dev = drv.cuDeviceGet(0)
    _, ctx = drv.cuDevicePrimaryCtxRetain(dev)
    drv.cuCtxSetCurrent(ctx)
    cc = int(report["versions"]["cc"].replace(".", ""))
    loaded, missing, failed = 0, 0, []
    t = time.perf_counter()
    for p in prebuild.programs():
        img = nvrtc.cached_image(p.stem, nvrtc.program_source(p), cc, folder)
        if img is None:
            missing += 1
            continue
        err, mod = drv.cuModuleLoadData(img)
        if int(err) == 0:
            loaded += 1
            drv.cuModuleUnload(mod)
        else:
            failed.append(f"{p.stem}: {err!r}")
    r.update(loaded=loaded, missing=missing, failed=failed[:10], seconds=round(time.perf_counter() - t, 3))


def run_tests(report: dict, dry: bool) -> None:
    if dry:
        report["tests"] = "skipped (dry run)"
        return
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", str(ROOT / "tests" / "cuda")],
                       capture_output=True, text=True, cwd=ROOT, timeout=420)
    report["tests"] = {"returncode": r.returncode, "tail": r.stdout[-3000:]}


def _median_ms(fn, sync, reps=20) -> float:
    fn()
    sync()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def timings(report: dict, dry: bool, numel: int) -> None:
    t = report["timings"] = {"numel": numel}
    if dry:
        t["status"] = "skipped (dry run)"
        return
    import torchlet as tl

    dev = "cuda"
    try:
        a = tl.ones([numel], dtype=tl.float32, device=dev)
        b = tl.ones([numel], dtype=tl.float32, device=dev)
        out = tl.empty([numel], dtype=tl.float32, device=dev)
        sync = tl.cuda.synchronize
        ms = _median_ms(lambda: tl.add(a, b, out=out), sync)
        t["torchlet_add_ms"] = ms
        t["torchlet_add_TBps"] = 3 * 4 * numel / ms / 1e9
        ms_copy = _median_ms(lambda: out.copy_(a), sync)
        t["torchlet_d2d_copy_ms"] = ms_copy
        t["add_vs_copy_bandwidth"] = (3 / ms) / (2 / ms_copy)
        sa, sb = tl.ones([4], device=dev), tl.ones([4], device=dev)
        t["torchlet_tiny_add_us"] = _median_ms(lambda: [tl.add(sa, sb) for _ in range(1000)], sync, 5)
    except Exception as e:
        t["torchlet"] = f"failed: {type(e).__name__}: {e}"
    try:
        import torch

        ta = torch.ones(numel, device="cuda")
        tb = torch.ones(numel, device="cuda")
        tout = torch.empty(numel, device="cuda")
        ms = _median_ms(lambda: torch.add(ta, tb, out=tout), torch.cuda.synchronize)
        t["torch_add_ms"] = ms
        t["torch_add_TBps"] = 3 * 4 * numel / ms / 1e9
        sa, sb = torch.ones(4, device="cuda"), torch.ones(4, device="cuda")
        t["torch_tiny_add_us"] = _median_ms(lambda: [torch.add(sa, sb) for _ in range(1000)],
                                            torch.cuda.synchronize, 5)
    except Exception as e:
        t["torch"] = f"failed: {type(e).__name__}: {e}"


def _tflops(n: int, ms: float) -> float:
    return 2 * n ** 3 / ms / 1e9


def reduction_and_gemm_timings(report: dict, dry: bool, numel: int, n: int = 4096) -> None:
    """sum of numel float32 (whole tensor: the two-pass kernels; and over the
    last dim of a [numel / 1024, 1024] view: one block per row) and an n x n
    mm in float32 / bfloat16, torchlet beside torch, with the values compared"""
    t = report["reduce_gemm"] = {"numel": numel, "mm_n": n}
    if dry:
        t["status"] = "skipped (dry run)"
        return
    import torchlet as tl

    try:
        sync = tl.cuda.synchronize
        a = tl.ones([numel], dtype=tl.float32, device="cuda")
        ms = _median_ms(lambda: a.sum(), sync)
        t["torchlet_sum_ms"], t["torchlet_sum_TBps"] = ms, 4 * numel / ms / 1e9
        rows = a.view([numel // 1024, 1024]) if hasattr(a, "view") else a.reshape([numel // 1024, 1024])
        ms = _median_ms(lambda: rows.sum(1), sync)
        t["torchlet_sum_rows_ms"], t["torchlet_sum_rows_TBps"] = ms, 4 * numel / ms / 1e9
        t["torchlet_sum_value"] = a.sum().item()
        for dt in (tl.float32, tl.bfloat16):
            x = tl.ones([n, n], dtype=dt, device="cuda")
            ms = _median_ms(lambda: tl.mm(x, x), sync, 10)
            t[f"torchlet_mm_{dt}_ms"], t[f"torchlet_mm_{dt}_TFLOPs"] = ms, _tflops(n, ms)
        t["torchlet_mm_corner"] = tl.mm(x, x)[0, 0].item()
    except Exception as e:
        t["torchlet"] = f"failed: {type(e).__name__}: {e}"
    try:
        import torch

        ta = torch.ones(numel, device="cuda")
        ms = _median_ms(lambda: ta.sum(), torch.cuda.synchronize)
        t["torch_sum_ms"], t["torch_sum_TBps"] = ms, 4 * numel / ms / 1e9
        tr = ta.view(numel // 1024, 1024)
        ms = _median_ms(lambda: tr.sum(1), torch.cuda.synchronize)
        t["torch_sum_rows_ms"], t["torch_sum_rows_TBps"] = ms, 4 * numel / ms / 1e9
        for dt in (torch.float32, torch.bfloat16):
            x = torch.ones(n, n, dtype=dt, device="cuda")
            ms = _median_ms(lambda: torch.mm(x, x), torch.cuda.synchronize, 10)
            name = str(dt).replace("torch.", "torchlet.")   # same keys as torchlet's dtype names
            t[f"torch_mm_{name}_ms"], t[f"torch_mm_{name}_TFLOPs"] = ms, _tflops(n, ms)
    except Exception as e:
        t["torch"] = f"failed: {type(e).__name__}: {e}"


def _torch():
    """PyTorch when installed, else None"""
    try:
        import torch
    except ImportError:
        return None
    return torch


def _nn_cases() -> dict:
    """name -> fn(lib, dev, arrays) returning a no-argument callable that runs
    the operator once and returns its result; lib is torchlet or torch (same
    API), arrays the case's numpy inputs"""
    def softmax_bwd(lib, dev, a):
        g, y = (lib.from_numpy(v).to(dev) for v in a)
        return lambda: lib._softmax_backward_data(g, y, -1, lib.float32)

    def log_softmax_bwd(lib, dev, a):
        g, y = (lib.from_numpy(v).to(dev) for v in a)
        return lambda: lib._log_softmax_backward_data(g, y, -1, lib.float32)

    def affine(lib, dev, cols):
        import numpy as np

        w = np.linspace(0.5, 1.5, cols, dtype=np.float32)
        return lib.from_numpy(w).to(dev), lib.from_numpy(w - 1).to(dev)

    def layer_norm(lib, dev, a):
        x = lib.from_numpy(a[0]).to(dev)
        w, b = affine(lib, dev, x.shape[-1])
        return lambda: lib.native_layer_norm(x, [x.shape[-1]], w, b, 1e-5)[0]

    def layer_norm_fwd_bwd(lib, dev, a):
        """forward, then grad_input, grad_weight and grad_bias through autograd; returns grad_input"""
        x, g = (lib.from_numpy(v).to(dev) for v in a)
        w, b = affine(lib, dev, x.shape[-1])
        w.requires_grad_()
        b.requires_grad_()

        def run():
            xr = x.detach().requires_grad_()
            lib.nn.functional.layer_norm(xr, [x.shape[-1]], w, b).backward(g)
            return xr.grad
        return run

    def cumsum(lib, dev, a):
        x = lib.from_numpy(a[0]).to(dev)
        return lambda: lib.cumsum(x, -1)

    return {"cumsum": cumsum, "softmax_backward": softmax_bwd, "log_softmax_backward": log_softmax_bwd, "layer_norm": layer_norm,
            "layer_norm_fwd_bwd": layer_norm_fwd_bwd}


def _nn_inputs(name: str, rows: int, cols: int) -> list:
    import numpy as np

    rng = np.random.default_rng(0)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    g = rng.standard_normal((rows, cols)).astype(np.float32)
    if name == "softmax_backward":
        e = np.exp(x - x.max(1, keepdims=True))
        return [g, e / e.sum(1, keepdims=True)]
    if name == "log_softmax_backward":
        return [g, x - x.max(1, keepdims=True) - np.log(np.exp(x - x.max(1, keepdims=True)).sum(1, keepdims=True))]
    return [x, g]


def nn_kernel_checks(report: dict, dry: bool, rows: int = 8192, cols: int = 4096) -> None:
    """the NN kernels on the device: each result against torchlet's CPU kernel
    (max abs difference) and timed beside torch on the same inputs"""
    t = report["nn_kernels"] = {"shape": [rows, cols]}
    if dry:
        t["status"] = "skipped (dry run)"
        return
    _compare_and_time(t, _nn_cases(), lambda name: _nn_inputs(name, rows, cols))


def _compare_and_time(t: dict, cases: dict, inputs) -> None:
    """each case on the device against torchlet's CPU (max abs difference, as
    float64) and timed beside torch on the same inputs (inputs(name): arrays)"""
    import torchlet as tl

    torch = _torch()
    for name, case in cases.items():
        r = t[name] = {}
        arrays = inputs(name)
        try:
            want = case(tl, "cpu", arrays)()
            run = case(tl, "cuda", arrays)
            got = run()
            r["max_abs_diff"] = (got.cpu().to(tl.float64) - want.to(tl.float64)).abs().max().item()
            r["torchlet_ms"] = _median_ms(run, tl.cuda.synchronize)
        except Exception as e:
            r["torchlet"] = f"failed: {type(e).__name__}: {e}"
        if torch is not None:
            try:
                r["torch_ms"] = _median_ms(case(torch, "cuda", arrays), torch.cuda.synchronize)
            except Exception as e:
                r["torch"] = f"failed: {type(e).__name__}: {e}"


def _block_cases(sizes: dict, ce: tuple, emb: tuple) -> dict:
    """name -> (numpy inputs, fn(lib, F, *leaves) -> output); leaves of a
    floating dtype require grad, the backward takes a fixed random gradient"""
    import numpy as np

    sys.path.insert(0, str(ROOT / "examples"))
    import seed_workloads as S

    rng = np.random.default_rng(0)
    block = S.make_inputs("transformer", sizes, rng)[:-1]
    logits = rng.standard_normal(ce).astype(np.float32)
    target = rng.integers(0, ce[1], ce[0])
    target[::7] = -100                                     # ignored rows
    weight = rng.standard_normal(emb).astype(np.float32)
    ids = rng.integers(0, emb[0], (emb[0] // 4,))
    return {
        "transformer_block": (block, lambda lib, F, *a: S.forward("transformer", lib, F, a, sizes)),
        "cross_entropy": ([logits, target], lambda lib, F, x, t: F.cross_entropy(x, t)),
        "embedding": ([weight, ids], lambda lib, F, w, i: F.embedding(i, w)),
    }


def _fwd_bwd(lib, dev, arrays, fn):
    """output and leaf gradients (numpy) of fn on `dev`, and a no-argument
    callable that reruns forward + backward"""
    import numpy as np

    leaves = [lib.from_numpy(np.ascontiguousarray(a)).to(dev) for a in arrays]
    for t in leaves:
        if t.dtype.is_floating_point:
            t.requires_grad_()
    y = fn(lib, lib.nn.functional, *leaves)
    g = lib.from_numpy(np.random.default_rng(1).standard_normal(tuple(y.shape)).astype(np.float32)).to(dev)

    def run():
        for t in leaves:
            t.grad = None
        fn(lib, lib.nn.functional, *leaves).backward(g)
    run()
    got = [y.detach().cpu().numpy()] + [t.grad.cpu().numpy() for t in leaves if t.dtype.is_floating_point]
    return got, run


def block_checks(report: dict, dry: bool, sizes: dict | None = None, ce: tuple = (4096, 1000),
                 emb: tuple = (32768, 512), reps: int = 20) -> None:
    """forward + backward on the device: output and gradients against
    torchlet's CPU run and torch's CUDA run (max abs difference over all of
    them), torchlet timed beside torch"""
    t = report["blocks"] = {}
    if dry:
        t["status"] = "skipped (dry run)"
        return
    import torchlet as tl

    torch = _torch()
    sizes = sizes or {"B": 8, "T": 128, "D": 256, "H": 4}
    for name, (arrays, fn) in _block_cases(sizes, ce, emb).items():
        r = t[name] = {}
        try:
            want, _ = _fwd_bwd(tl, "cpu", arrays, fn)
            got, run = _fwd_bwd(tl, "cuda", arrays, fn)
            r["max_abs_diff_vs_cpu"] = max(float(abs(a - b).max()) if a.size else 0.0 for a, b in zip(got, want))
            r["torchlet_ms"] = _median_ms(run, tl.cuda.synchronize, reps)
        except Exception as e:
            r["torchlet"] = f"failed: {type(e).__name__}: {e}"
            continue
        if torch is not None and torch.cuda.is_available():
            try:
                ref, trun = _fwd_bwd(torch, "cuda", arrays, fn)
                r["max_abs_diff_vs_torch"] = max(float(abs(a - b).max()) if a.size else 0.0 for a, b in zip(got, ref))
                r["torch_ms"] = _median_ms(trun, torch.cuda.synchronize, reps)
                r["torch_over_torchlet"] = r["torch_ms"] / r["torchlet_ms"]
            except Exception as e:
                r["torch"] = f"failed: {type(e).__name__}: {e}"
def _reduction_cases() -> dict:
    """the statistics and logical reductions (fn(lib, dev, arrays) -> a
    callable returning one tensor, as _nn_cases): over the last dim (one block
    per row), the first dim (a thread per output) and the whole tensor (two
    passes)"""
    def on(fn):
        return lambda lib, dev, a: (lambda x: lambda: fn(lib, x))(lib.from_numpy(a[0]).to(dev))

    return {
        "var_rows": on(lambda lib, x: lib.var(x, -1)),
        "var_mean_cols": on(lambda lib, x: lib.var_mean(x, 0)[0]),
        "std_all": on(lambda lib, x: lib.std(x)),
        "logsumexp_rows": on(lambda lib, x: lib.logsumexp(x, [-1])),
        "logsumexp_all": on(lambda lib, x: lib.logsumexp(x, [0, 1])),
        "max_dim_values": on(lambda lib, x: lib.max(x, -1)[0]),
        "max_dim_indices": on(lambda lib, x: lib.max(x, -1)[1]),
        "min_all": on(lambda lib, x: lib.min(x)),
        "any_rows": on(lambda lib, x: lib.any(x > 3.5, -1)),
        "all_all": on(lambda lib, x: lib.all(x > -10)),
        "norm2_rows": on(lambda lib, x: lib.linalg.vector_norm(x, 2, -1)),
        "norm_inf_all": on(lambda lib, x: lib.linalg.vector_norm(x, float("inf"))),
        "norm3_cols": on(lambda lib, x: lib.linalg.vector_norm(x, 3, 0)),
        "prod_all": on(lambda lib, x: lib.prod(1 + x * 1e-6)),
        "nansum_rows": on(lambda lib, x: lib.nansum(x, -1)),
        "aminmax_cols": on(lambda lib, x: lib.aminmax(x, dim=0)[1]),
        "count_nonzero_rows": on(lambda lib, x: lib.count_nonzero(x > 1, -1)),
    }


def reduction_checks(report: dict, dry: bool, rows: int = 8192, cols: int = 4096) -> None:
    """var / std / var_mean, logsumexp, max / min, any / all, vector_norm and
    prod on the device: against torchlet's CPU kernels and timed beside torch"""
    t = report["reductions"] = {"shape": [rows, cols]}
    if dry:
        t["status"] = "skipped (dry run)"
        return
    import numpy as np

    x = np.random.default_rng(1).standard_normal((rows, cols)).astype(np.float32)
    _compare_and_time(t, _reduction_cases(), lambda name: [x])
    # past 32-bit offsets: 2^31 + 4096 bytes, one non-zero near the end (the reduced dims split into pieces)
    import torchlet as tl

    try:
        n = (1 << 31) + 4096
        big = tl.zeros([n], dtype=tl.uint8, device="cuda")
        big[n - 5] = 1
        t["past_2^31"] = {"argmax": big.argmax().item(), "want": n - 5, "sum": big.sum().item(),
                          "any": bool(big.any().item()), "rows_max": big.view([2, n // 2]).max(1)[1].tolist()}
        del big
    except Exception as e:
        t["past_2^31"] = f"failed: {type(e).__name__}: {e}"


def table(report: dict) -> str:
    rows = []

    def walk(prefix, d):
        for k, v in d.items():
            if isinstance(v, dict):
                walk(f"{prefix}{k}.", v)
            else:
                rows.append((prefix + k, v if not isinstance(v, float) else round(v, 4)))
    walk("", report)
    w = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{w}}  {str(v)[:200]}" for k, v in rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "gpu_check_out")))
    ap.add_argument("--numel", type=int, default=1 << 28)
    a = ap.parse_args(argv)
    report: dict = {"dry_run": a.dry_run, "started": time.strftime("%Y-%m-%dT%H:%M:%S")}
    for step in (lambda: versions(report), lambda: cache_load(report, a.dry_run),
                 lambda: run_tests(report, a.dry_run), lambda: timings(report, a.dry_run, a.numel),
                 lambda: reduction_and_gemm_timings(report, a.dry_run, a.numel),
                 lambda: nn_kernel_checks(report, a.dry_run), lambda: block_checks(report, a.dry_run),
                 lambda: reduction_checks(report, a.dry_run)):
        try:
            step()
        except Exception as e:
            report.setdefault("errors", []).append(f"{type(e).__name__}: {e}")
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "gpu_check.json").write_text(json.dumps(report, indent=2, default=str))
    text = table(report)
    (a.out / "gpu_check.txt").write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
