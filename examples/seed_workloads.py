"""The seed workloads (linear, rmsnorm, linear + silu, softmax, a Transformer
block), forward and backward, in torchlet and (when installed) PyTorch, with
their timings side by side.

    python examples/seed_workloads.py            # default sizes
    SEED_SMALL=1 python examples/seed_workloads.py

Each seed is written once against a library object (`torchlet` or `torch`,
plus its `nn.functional`), so the same code runs on both; the tests
(tests/ops/test_seed_workloads.py) and the benchmark (benchmarks/bench_seed.py)
import the definitions from here:

* linear        y = F.linear(x, W, b)                     (addmm with bias)
* rmsnorm       x * rsqrt(mean(x * x, -1, keepdim) + eps) * w
* linear_silu   F.silu(F.linear(x, W, b))
* softmax       F.softmax(x, -1)
* transformer   x + proj(attn(chunk(qkv(layer_norm(x))))): layer_norm, qkv
                Linear, chunk, causal scaled_dot_product_attention, output
                projection, residual

Backward: the loss is sum(y * g) for a fixed random g, so every gradient
entry is exercised.
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

SIZES = {
    # name: dict of sizes (bench / example defaults)
    "linear": dict(B=256, I=512, O=512),
    "rmsnorm": dict(B=512, D=1024),
    "linear_silu": dict(B=256, I=512, O=512),
    "softmax": dict(B=512, D=1024),
    "transformer": dict(B=8, T=128, D=256, H=4),
}
SMALL = {
    "linear": dict(B=3, I=5, O=4),
    "rmsnorm": dict(B=3, D=6),
    "linear_silu": dict(B=3, I=5, O=4),
    "softmax": dict(B=3, D=7),
    "transformer": dict(B=2, T=5, D=8, H=2),
}
EPS = 1e-6


def make_inputs(name: str, sizes: dict, rng: np.random.Generator, dtype=np.float32) -> list[np.ndarray]:
    """The seed's inputs as numpy arrays (the last one is the loss weight g)."""
    s = sizes

    def rn(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(dtype)

    if name in ("linear", "linear_silu"):
        return [rn(s["B"], s["I"]), rn(s["O"], s["I"], scale=s["I"] ** -0.5), rn(s["O"]), rn(s["B"], s["O"])]
    if name == "rmsnorm":
        return [rn(s["B"], s["D"]), rn(s["D"]), rn(s["B"], s["D"])]
    if name == "softmax":
        return [rn(s["B"], s["D"], scale=2.0), rn(s["B"], s["D"])]
    if name == "transformer":
        B, T, D = s["B"], s["T"], s["D"]
        return [rn(B, T, D), (1 + rn(D, scale=0.1)), rn(D, scale=0.1), rn(3 * D, D, scale=D ** -0.5),
                rn(3 * D, scale=0.1), rn(D, D, scale=D ** -0.5), rn(D, scale=0.1), rn(B, T, D)]
    raise KeyError(name)


def forward(name: str, lib, F, args, sizes: dict):
    """The seed's output from library tensors `args` (without g)."""
    if name == "linear":
        x, w, b = args
        return F.linear(x, w, b)
    if name == "linear_silu":
        x, w, b = args
        return F.silu(F.linear(x, w, b))
    if name == "rmsnorm":
        x, w = args
        return x * lib.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * w
    if name == "softmax":
        (x,) = args
        return F.softmax(x, -1)
    if name == "transformer":
        x, ln_w, ln_b, w_qkv, b_qkv, w_o, b_o = args
        B, T, D, H = sizes["B"], sizes["T"], sizes["D"], sizes["H"]
        h = F.layer_norm(x, (D,), ln_w, ln_b)
        qkv = F.linear(h, w_qkv, b_qkv)
        q, k, v = qkv.chunk(3, -1)
        q, k, v = (t.reshape(B, T, H, D // H).transpose(1, 2) for t in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        a = a.transpose(1, 2).reshape(B, T, D)
        return x + F.linear(a, w_o, b_o)
    raise KeyError(name)


def numpy_forward(name: str, arrays, sizes: dict) -> np.ndarray:
    """The reference forward in float64 numpy (no g)."""
    a = [np.asarray(x, dtype=np.float64) for x in arrays]
    if name in ("linear", "linear_silu"):
        x, w, b = a
        y = x @ w.T + b
        return y / (1 + np.exp(-y)) if name == "linear_silu" else y
    if name == "rmsnorm":
        x, w = a
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + EPS) * w
    if name == "softmax":
        (x,) = a
        e = np.exp(x - x.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)
    if name == "transformer":
        x, ln_w, ln_b, w_qkv, b_qkv, w_o, b_o = a
        B, T, D, H = sizes["B"], sizes["T"], sizes["D"], sizes["H"]
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        h = (x - m) / np.sqrt(v + 1e-5) * ln_w + ln_b
        qkv = h @ w_qkv.T + b_qkv
        q, k, vv = (t.reshape(B, T, H, D // H).transpose(0, 2, 1, 3) for t in np.split(qkv, 3, -1))
        s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(D // H)
        s = np.where(np.tril(np.ones((T, T), bool)), s, -np.inf)
        p = np.exp(s - s.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        o = (p @ vv).transpose(0, 2, 1, 3).reshape(B, T, D)
        return x + o @ w_o.T + b_o
    raise KeyError(name)


def to_lib(lib, arrays, requires_grad=True):
    """numpy arrays -> library tensors (leaves that require grad), g last (no grad)."""
    if lib.__name__ == "torch":
        ts = [lib.tensor(a) for a in arrays]
    else:
        ts = [lib.from_numpy(np.ascontiguousarray(a)) for a in arrays]
    if requires_grad:
        for t in ts[:-1]:
            t.requires_grad_(True)
    return ts


def fwd_bwd(name, lib, F, ts, sizes):
    """One forward + backward; returns (output, grads of the inputs)."""
    for t in ts[:-1]:
        t.grad = None
    y = forward(name, lib, F, ts[:-1], sizes)
    (y * ts[-1]).sum().backward()
    return y, [t.grad for t in ts[:-1]]


def _time(fn, reps):
    fn()
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> int:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import torchlet as tl
    import torchlet.nn.functional as tF

    try:
        import torch
        import torch.nn.functional as pF
    except ImportError:
        torch = pF = None
    sizes_all = SMALL if os.environ.get("SEED_SMALL") else SIZES
    reps = int(os.environ.get("SEED_REPS", "5"))
    rng = np.random.default_rng(0)
    print(f"seed workloads, forward + backward, float32, {tl.get_num_threads()} thread(s); best of {reps}")
    print(f"{'seed':<12} {'sizes':<28} {'torchlet':>11} {'torch':>11} {'torch/torchlet':>15}  max |diff|")
    for name, sizes in sizes_all.items():
        arrays = make_inputs(name, sizes, rng)
        tts = to_lib(tl, arrays)
        try:
            y, _ = fwd_bwd(name, tl, tF, tts, sizes)
        except (NotImplementedError, AttributeError, RuntimeError) as e:
            print(f"{name:<12} skipped: {type(e).__name__}: {e}")
            continue
        t_tl = _time(lambda: fwd_bwd(name, tl, tF, tts, sizes), reps)
        t_pt, diff = None, ""
        if torch is not None:
            pts = to_lib(torch, arrays)
            yp, _ = fwd_bwd(name, torch, pF, pts, sizes)
            diff = f"{np.abs(y.detach().numpy() - yp.detach().numpy()).max():.2e}"
            t_pt = _time(lambda: fwd_bwd(name, torch, pF, pts, sizes), reps)
        sz = ",".join(f"{k}={v}" for k, v in sizes.items())
        pt = f"{t_pt * 1e3:8.2f} ms" if t_pt else "     -     "
        ratio = f"{t_pt / t_tl:15.2f}" if t_pt else f"{'-':>15}"
        print(f"{name:<12} {sz:<28} {t_tl * 1e3:8.2f} ms {pt} {ratio}  {diff}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
