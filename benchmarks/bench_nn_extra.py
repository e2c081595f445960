"""The NN operators OpInfo found missing, beside PyTorch, one thread: 3-d
reflection / replication padding (float32, forward + backward), fractional
max pooling 2-d / 3-d (float32, fixed samples, forward + backward), uint8
bilinear / bicubic interpolation (PyTorch's fixed point), antialiased
bilinear downsampling (float32 forward + backward, uint8), and an int64
convolution (PyTorch's slow path against torchlet's exact loops). Timed
round robin (`interleaved`): on a shared machine only the ratios mean
something. Ratio = torch's time / torchlet's time (above 1.0 torchlet is
faster)."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import torchlet as tl  # noqa: E402

from _harness import machine_info, print_interleaved, torch  # noqa: E402


def _fwd(lib, fn, *arrays):
    ts = [lib.tensor(a) for a in arrays]
    return lambda: fn(lib, *ts)


def _fwd_bwd(lib, fn, *arrays):
    ts = [lib.tensor(a) for a in arrays]
    x = ts[0].requires_grad_(True)

    def step():
        x.grad = None
        fn(lib, *ts).sum().backward()
    return step


def _pad(mode):
    return lambda lib, x: lib.nn.functional.pad(x, (2, 2, 2, 2, 2, 2), mode)


def _fmp2(lib, x, u):
    return lib.nn.functional.fractional_max_pool2d(x, 3, output_size=(40, 40), _random_samples=u)


def _fmp3(lib, x, u):
    return lib.nn.functional.fractional_max_pool3d(x, 2, output_size=(10, 10, 10), _random_samples=u)


def _interp(mode, size, aa=False):
    return lambda lib, x: lib.nn.functional.interpolate(x, size=size, mode=mode, antialias=aa)


def _conv(lib, x, w):
    return lib.nn.functional.conv2d(x, w, padding=1)


def cases():
    rng = np.random.default_rng(0)
    vol = rng.standard_normal((4, 16, 16, 32, 32)).astype(np.float32)
    img = rng.standard_normal((8, 16, 64, 64)).astype(np.float32)
    u2 = rng.random((8, 16, 2)).astype(np.float32)
    v3 = rng.standard_normal((4, 8, 16, 16, 16)).astype(np.float32)
    u3 = rng.random((4, 8, 3)).astype(np.float32)
    rgb = rng.integers(0, 256, (4, 3, 256, 256)).astype(np.uint8)
    xi = rng.integers(-50, 50, (4, 16, 32, 32))
    wi = rng.integers(-50, 50, (16, 16, 3, 3))
    specs = {
        "reflection_pad3d 4x16x16x32x32 f+b": (_fwd_bwd, _pad("reflect"), (vol,)),
        "replication_pad3d 4x16x16x32x32 f+b": (_fwd_bwd, _pad("replicate"), (vol,)),
        "fractional_max_pool2d 8x16x64x64 f+b": (_fwd_bwd, _fmp2, (img, u2)),
        "fractional_max_pool3d 4x8x16^3 f+b": (_fwd_bwd, _fmp3, (v3, u3)),
        "bilinear uint8 3x256^2 -> 400^2": (_fwd, _interp("bilinear", (400, 400)), (rgb,)),
        "bicubic uint8 3x256^2 -> 400^2": (_fwd, _interp("bicubic", (400, 400)), (rgb,)),
        "bilinear aa uint8 3x256^2 -> 100^2": (_fwd, _interp("bilinear", (100, 100), True), (rgb,)),
        "bilinear aa f32 8x16x64^2 -> 24^2 f+b": (_fwd_bwd, _interp("bilinear", (24, 24), True), (img,)),
        "conv2d int64 4x16x32x32, 3x3": (_fwd, _conv, (xi, wi)),
    }
    rows = {}
    for name, (mk, fn, arrays) in specs.items():
        rows[name] = dict(torchlet=mk(tl, fn, *arrays))
        if torch is not None:
            rows[name]["torch"] = mk(torch, fn, *arrays)
    return rows


def main():
    tl.set_num_threads(1)
    if torch is not None:
        torch.set_num_threads(1)
    print(f"# NN operators OpInfo found missing, 1 thread, {tl.get_cpu_capability()} ({machine_info()})")
    print_interleaved(cases(), rounds=5, width=40)


if __name__ == "__main__":
    main()
