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
    o = _rt.empty(N)
    o_np = np.empty_like(p)
    o_pt = torch.empty(N) if torch is not None else None
    TS = torch.special if torch is not None else None
    # case: (torchlet call, its numpy input, scipy's function name, PyTorch's call on the torch input)
    table = {
        "ndtri out=": (lambda t: S.ndtri(t, out=o), p, "ndtri", lambda t: TS.ndtri(t, out=o_pt)),
        "log_ndtr out=": (lambda t: S.log_ndtr(t, out=o), x, "log_ndtr", lambda t: TS.log_ndtr(t, out=o_pt)),
        "erfcx out=": (lambda t: S.erfcx(t, out=o), x, "erfcx", lambda t: TS.erfcx(t, out=o_pt)),
        "i0e out=": (lambda t: S.i0e(t, out=o), x, "i0e", lambda t: TS.i0e(t, out=o_pt)),
        "bessel_j0 out=": (lambda t: S.bessel_j0(t, out=o), x, "j0", lambda t: TS.bessel_j0(t, out=o_pt)),
        "modified_bessel_k0": (lambda t: S.modified_bessel_k0(t, out=o), z, "k0",
                               lambda t: TS.modified_bessel_k0(t, out=o_pt)),
        "chebyshev_t n=5": (lambda t: S.chebyshev_polynomial_t(t, 5, out=o), c, None,
                            lambda t: TS.chebyshev_polynomial_t(t, 5, out=o_pt)),
        "igamma(z, z) out=": (lambda t: tl.igamma(t, t, out=o), z, None, lambda t: torch.igamma(t, t, out=o_pt)),
    }
    rows = {}
    for case, (fn, arr, sp_name, tfn) in table.items():
        t = tl.from_numpy(arr)
        rows[case] = dict(torchlet=lambda fn=fn, t=t: fn(t))
        if _sp is not None and sp_name is not None:
            rows[case]["numpy"] = lambda f=getattr(_sp, sp_name), a=arr: f(a, out=o_np)
        if torch is not None:
            rows[case]["torch"] = lambda tfn=tfn, a=torch.from_numpy(arr): tfn(a)
    return rows


def main():
    tl.set_num_threads(1)
    if torch is not None:
        torch.set_num_threads(1)
    print(f"# torchlet.special functions, 2^20 float32, 1 thread, {tl.get_cpu_capability()} ({machine_info()})")
    print_interleaved(cases(), width=20)


if __name__ == "__main__":
    main()
