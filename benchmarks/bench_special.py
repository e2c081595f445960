"""Special pointwise math on 2^20 float32, one thread: lgamma, digamma,
logaddexp, fmax (and fmin, xlogy, erfinv, i0), out= so that only the loops
are timed, torchlet beside PyTorch (when installed) and numpy. Timed round
robin (`interleaved`): on a shared machine only the ratios mean something.
Ratio = other library's time / torchlet's time (above 1.0 torchlet is faster).

numpy has no lgamma / digamma / erfinv (scipy.special's when installed);
np.i0 computes in float64 whatever the input."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import torchlet as tl  # noqa: E402
from torchlet import _rt  # noqa: E402

from _harness import machine_info, print_interleaved, torch  # noqa: E402

try:
    import scipy.special as _sp
except ImportError:  # pragma: no cover
    _sp = None

N = 1 << 20


def cases():
    rng = np.random.default_rng(0)
    a = rng.uniform(0.1, 20, N).astype(np.float32)
    b = rng.uniform(-10, 10, N).astype(np.float32)
    u = rng.uniform(-0.99, 0.99, N).astype(np.float32)
    ta, tb, tu, o_tl, o_np = tl.from_numpy(a), tl.from_numpy(b), tl.from_numpy(u), _rt.empty(N), np.empty_like(a)
    rows = {
        "lgamma out=": dict(torchlet=lambda: tl.lgamma(ta, out=o_tl)),
        "digamma out=": dict(torchlet=lambda: tl.digamma(ta, out=o_tl)),
        "erfinv out=": dict(torchlet=lambda: tl.erfinv(tu, out=o_tl)),
        "i0 out=": dict(torchlet=lambda: tl.i0(tb, out=o_tl), numpy=lambda: np.i0(b)),
        "logaddexp out=": dict(torchlet=lambda: tl.logaddexp(ta, tb, out=o_tl),
                               numpy=lambda: np.logaddexp(a, b, out=o_np)),
        "fmax out=": dict(torchlet=lambda: tl.fmax(ta, tb, out=o_tl), numpy=lambda: np.fmax(a, b, out=o_np)),
        "fmin out=": dict(torchlet=lambda: tl.fmin(ta, tb, out=o_tl), numpy=lambda: np.fmin(a, b, out=o_np)),
        "xlogy out=": dict(torchlet=lambda: tl.xlogy(tb, ta, out=o_tl)),
    }
    if _sp is not None:
        rows["lgamma out="]["numpy"] = lambda: _sp.gammaln(a, out=o_np)
        rows["digamma out="]["numpy"] = lambda: _sp.digamma(a, out=o_np)
        rows["erfinv out="]["numpy"] = lambda: _sp.erfinv(u, out=o_np)
        rows["xlogy out="]["numpy"] = lambda: _sp.xlogy(b, a, out=o_np)
    if torch is not None:
        pa, pb, pu, o_pt = torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(u), torch.empty(N)
        rows["lgamma out="]["torch"] = lambda: torch.lgamma(pa, out=o_pt)
        rows["digamma out="]["torch"] = lambda: torch.digamma(pa, out=o_pt)
        rows["erfinv out="]["torch"] = lambda: torch.erfinv(pu, out=o_pt)
        rows["i0 out="]["torch"] = lambda: torch.i0(pb, out=o_pt)
        rows["logaddexp out="]["torch"] = lambda: torch.logaddexp(pa, pb, out=o_pt)
        rows["fmax out="]["torch"] = lambda: torch.fmax(pa, pb, out=o_pt)
        rows["fmin out="]["torch"] = lambda: torch.fmin(pa, pb, out=o_pt)
        rows["xlogy out="]["torch"] = lambda: torch.xlogy(pb, pa, out=o_pt)
    return rows


def main():
    tl.set_num_threads(1)
    if torch is not None:
        torch.set_num_threads(1)
    print(f"# special math, 2^20 float32, 1 thread, {tl.get_cpu_capability()} ({machine_info()})")
    print_interleaved(cases(), width=18)


if __name__ == "__main__":
    main()
