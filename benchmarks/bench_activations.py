"""Activations on 2^24 float32, one thread: gelu (approximate='none' and
'tanh') and their backward, tanh, mish, sigmoid, silu and leaky_relu,
allocating and out=, torchlet beside
PyTorch (when installed) and numpy. Timed round robin (`interleaved`): on a shared machine
only the ratios mean something. Ratio = other library's time / torchlet's
time (above 1.0 torchlet is faster).

numpy has no gelu / leaky_relu / mish: its rows are the numpy expressions a
numpy user writes (gelu 'none' needs erf, from scipy.special when installed)."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import torchlet as tl  # noqa: E402
from torchlet import _rt  # noqa: E402

from _harness import machine_info, print_interleaved, torch  # noqa: E402

try:
    from scipy.special import erf as _erf
except ImportError:  # pragma: no cover
    _erf = None

N = 1 << 24
NN = tl._C._nn


def cases():
    a = np.random.default_rng(0).standard_normal(N).astype(np.float32) * 3
    g = np.random.default_rng(1).standard_normal(N).astype(np.float32)
    ta, tg, o_tl, o_np = tl.from_numpy(a), tl.from_numpy(g), _rt.empty(N), np.empty_like(a)
    c = np.float32(np.sqrt(2 / np.pi))
    rows = {
        "gelu (allocating)": dict(torchlet=lambda: NN.gelu(ta)),
        "gelu out=": dict(torchlet=lambda: NN.gelu(ta, out=o_tl)),
        "gelu tanh (allocating)": dict(torchlet=lambda: NN.gelu(ta, approximate="tanh"),
                                       numpy=lambda: 0.5 * a * (1 + np.tanh(c * (a + np.float32(0.044715) * a ** 3)))),
        "gelu tanh out=": dict(torchlet=lambda: NN.gelu(ta, approximate="tanh", out=o_tl)),
        "gelu_backward": dict(torchlet=lambda: NN.gelu_backward(tg, ta)),
        "gelu_backward tanh": dict(torchlet=lambda: NN.gelu_backward(tg, ta, approximate="tanh")),
        "tanh out=": dict(torchlet=lambda: tl.tanh(ta, out=o_tl), numpy=lambda: np.tanh(a, out=o_np)),
        "mish out=": dict(torchlet=lambda: NN.mish(ta, out=o_tl),
                          numpy=lambda: np.multiply(a, np.tanh(np.logaddexp(0, a)), out=o_np)),
        "sigmoid out=": dict(torchlet=lambda: tl.sigmoid(ta, out=o_tl),
                             numpy=lambda: np.divide(1, 1 + np.exp(-a), out=o_np)),
        "silu out=": dict(torchlet=lambda: NN.silu(ta, out=o_tl),
                          numpy=lambda: np.divide(a, 1 + np.exp(-a), out=o_np)),
        "leaky_relu (allocating)": dict(torchlet=lambda: NN.leaky_relu(ta),
                                        numpy=lambda: np.where(a > 0, a, a * np.float32(0.01))),
        "leaky_relu out=": dict(torchlet=lambda: NN.leaky_relu(ta, out=o_tl),
                                numpy=lambda: np.copyto(o_np, np.where(a > 0, a, a * np.float32(0.01)))),
    }
    if _erf is not None:
        rows["gelu (allocating)"]["numpy"] = lambda: 0.5 * a * (1 + _erf(a * np.float32(np.sqrt(0.5))))
    if torch is not None:
        pa, o_pt = torch.from_numpy(a), torch.empty(N)
        F = torch.nn.functional
        rows["gelu (allocating)"]["torch"] = lambda: F.gelu(pa)
        rows["gelu out="]["torch"] = lambda: torch._C._nn.gelu(pa, out=o_pt)
        rows["gelu tanh (allocating)"]["torch"] = lambda: F.gelu(pa, approximate="tanh")
        pg = torch.from_numpy(g)
        rows["gelu tanh out="]["torch"] = lambda: torch._C._nn.gelu(pa, approximate="tanh", out=o_pt)
        rows["gelu_backward"]["torch"] = lambda: torch.ops.aten.gelu_backward(pg, pa)
        rows["gelu_backward tanh"]["torch"] = lambda: torch.ops.aten.gelu_backward(pg, pa, approximate="tanh")
        rows["tanh out="]["torch"] = lambda: torch.tanh(pa, out=o_pt)
        rows["mish out="]["torch"] = lambda: torch._C._nn.mish(pa, out=o_pt)
        rows["sigmoid out="]["torch"] = lambda: torch.sigmoid(pa, out=o_pt)
        rows["silu out="]["torch"] = lambda: torch._C._nn.silu(pa, out=o_pt)
        rows["leaky_relu (allocating)"]["torch"] = lambda: F.leaky_relu(pa)
        rows["leaky_relu out="]["torch"] = lambda: torch._C._nn.leaky_relu(pa, out=o_pt)
    return rows


def main():
    tl.set_num_threads(1)
    if torch is not None:
        torch.set_num_threads(1)
    print(f"# activations, 2^24 float32, 1 thread, {tl.get_cpu_capability()} ({machine_info()})")
    print_interleaved(cases(), width=26)


if __name__ == "__main__":
    main()
