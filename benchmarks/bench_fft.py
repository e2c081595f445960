"""FFT throughput: torchlet.fft (kernels/native/fft_plan.c) beside numpy.fft
(pocketfft) and torch.fft (MKL or pocketfft) at one thread: complex fft and
real rfft of 2^10, 2^16, 2^20 complex64 / float32 points, a prime length
(Bluestein) and a 2-d fft2 of 1024 x 1024. Ratios are the other library's
time over torchlet's (above 1: torchlet faster). docs/FFT.md has the figures."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import torchlet as tl  # noqa: E402

from _harness import Bench, machine_info, thread_counts, torch  # noqa: E402


def run(threads: int):
    rng = np.random.default_rng(0)
    b = Bench("fft / rfft, float32 data", threads=threads)
    cases = [("fft 2^10 x 64 (complex64)", (64, 1 << 10), True), ("fft 2^16 (complex64)", (1 << 16,), True),
             ("fft 2^20 (complex64)", (1 << 20,), True), ("fft 100003 (prime, complex64)", (100003,), True),
             ("rfft 2^10 x 64 (float32)", (64, 1 << 10), False), ("rfft 2^16 (float32)", (1 << 16,), False),
             ("rfft 2^20 (float32)", (1 << 20,), False)]
    for name, shape, cplx in cases:
        x = rng.standard_normal(shape).astype(np.float32)
        if cplx:
            x = (x + 1j * rng.standard_normal(shape).astype(np.float32)).astype(np.complex64)
        tx = tl.from_numpy(x)
        f_tl, f_np = (tl.fft.fft, np.fft.fft) if cplx else (tl.fft.rfft, np.fft.rfft)
        px = torch.from_numpy(x) if torch is not None else None
        f_pt = (torch.fft.fft if cplx else torch.fft.rfft) if torch is not None else None
        b.row(name, None, torchlet=lambda: f_tl(tx), numpy=lambda: f_np(x),
              torch=(lambda: f_pt(px)) if torch is not None else None)
    x2 = (rng.standard_normal((1024, 1024)) + 1j * rng.standard_normal((1024, 1024))).astype(np.complex64)
    t2 = tl.from_numpy(x2)
    p2 = torch.from_numpy(x2) if torch is not None else None
    b.row("fft2 1024 x 1024 (complex64)", None, torchlet=lambda: tl.fft.fft2(t2), numpy=lambda: np.fft.fft2(x2),
          torch=(lambda: torch.fft.fft2(p2)) if torch is not None else None)
    b.print()


def main():
    print(f"bench_fft: {machine_info()}; numpy {np.__version__}")
    for threads in thread_counts([1]):
        run(threads)


if __name__ == "__main__":
    main()
