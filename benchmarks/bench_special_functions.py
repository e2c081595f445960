"""torchlet.special's normal-distribution, Bessel, polynomial and incomplete
gamma functions on 2^20 float32, one thread, out= so that only the loops are
timed: torchlet beside PyTorch (when installed) and scipy.special (when
installed, in the "numpy" column). Timed round robin (`interleaved`): on a shared machine only the
ratios mean something. Ratio = other library's time / torchlet's time (above
1.0 torchlet is faster).

torchlet computes these in double and rounds once (docs/SPECIAL.md); K0 is a
trapezoid sum of 20 to 60 exponentials per value."""
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
S = tl.special


def cases():
    rng = np.random.default_rng(0)
    p = rng.uniform(0.001, 0.999, N).astype(np.float32)
    x = rng.uniform(-8, 8, N).astype(np.float32)
    z = rng.uniform(0.1, 20, N).astype(np.float32)
    c = rng.uniform(-1, 1, N).astype(np.float32)
    tp, tx, tz, tc = tuple(tl.from_numpy(v) for v in (p, x, z, c))
    o = _rt.empty(N)
    rows = {
        "ndtri out=": dict(torchlet=lambda: S.ndtri(tp, out=o)),
        "log_ndtr out=": dict(torchlet=lambda: S.log_ndtr(tx, out=o)),
        "erfcx out=": dict(torchlet=lambda: S.erfcx(tx, out=o)),
        "i0e out=": dict(torchlet=lambda: S.i0e(tx, out=o)),
        "bessel_j0 out=": dict(torchlet=lambda: S.bessel_j0(tx, out=o)),
        "modified_bessel_k0": dict(torchlet=lambda: S.modified_bessel_k0(tz, out=o)),
        "chebyshev_t n=5": dict(torchlet=lambda: S.chebyshev_polynomial_t(tc, 5, out=o)),
        "igamma out=": dict(torchlet=lambda: tl.igamma(tz, tz, out=o)),
    }
    if _sp is not None:
        o_np = np.empty_like(p)
        rows["ndtri out="]["numpy"] = lambda: _sp.ndtri(p, out=o_np)
        rows["log_ndtr out="]["numpy"] = lambda: _sp.log_ndtr(x, out=o_np)
        rows["erfcx out="]["numpy"] = lambda: _sp.erfcx(x, out=o_np)
        rows["i0e out="]["numpy"] = lambda: _sp.i0e(x, out=o_np)
        rows["bessel_j0 out="]["numpy"] = lambda: _sp.j0(x, out=o_np)
        rows["modified_bessel_k0"]["numpy"] = lambda: _sp.k0(z, out=o_np)
        rows["chebyshev_t n=5"]["numpy"] = lambda: _sp.eval_chebyt(5, c, out=o_np)
        rows["igamma out="]["numpy"] = lambda: _sp.gammainc(z, z, out=o_np)
    if torch is not None:
        pp, px, pz, pc = (torch.from_numpy(v) for v in (p, x, z, c))
        o_pt = torch.empty(N)
        TS = torch.special
        rows["ndtri out="]["torch"] = lambda: TS.ndtri(pp, out=o_pt)
        rows["log_ndtr out="]["torch"] = lambda: TS.log_ndtr(px, out=o_pt)
        rows["erfcx out="]["torch"] = lambda: TS.erfcx(px, out=o_pt)
        rows["i0e out="]["torch"] = lambda: TS.i0e(px, out=o_pt)
        rows["bessel_j0 out="]["torch"] = lambda: TS.bessel_j0(px, out=o_pt)
        rows["modified_bessel_k0"]["torch"] = lambda: TS.modified_bessel_k0(pz, out=o_pt)
        rows["chebyshev_t n=5"]["torch"] = lambda: TS.chebyshev_polynomial_t(pc, 5, out=o_pt)
        rows["igamma out="]["torch"] = lambda: torch.igamma(pz, pz, out=o_pt)
    return rows


def main():
    tl.set_num_threads(1)
    if torch is not None:
        torch.set_num_threads(1)
    print(f"# torchlet.special functions, 2^20 float32, 1 thread, {tl.get_cpu_capability()} ({machine_info()})")
    print_interleaved(cases(), width=20)


if __name__ == "__main__":
    main()
