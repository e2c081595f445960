"""Derives the polynomial coefficients of tl_vexp.h (tl_expf, tl_erff) and
tl_vtanh.h (tl_tanhf).

A development tool, not part of the build or the tests: run it with mpmath
installed (`python kernels/ufunc/tl_vexp_fit.py`) and it prints the float32
coefficients as C literals with the weighted minimax error of each fit. The
fits are the Remez exchange algorithm in 40-digit arithmetic:

* exp: e^r = 1 + r + r^2 q(r) on [-ln2/2, ln2/2], q of degree 4 (e^r of
  degree 6), minimizing the relative error of e^r (weight r^2 / e^r);
* erf, |x| < A: erf(x) = x + x (c0 + c1 u + ... + c6 u^6) with u = x^2,
  minimizing the relative error of erf (the variable is u, the weight
  sqrt(u) / erf(sqrt(u)));
* erf, A <= |x| < B: erfc(x) = Q(x - MID), Q of degree 12, minimizing the
  absolute error (erf = 1 - Q, whose ulp is 2^-24 .. 2^-25 there);
* tanh, |x| < T: tanh(x) = x + x u P(u) with u = x^2, P of degree 4,
  minimizing the relative error of tanh (the function fitted is
  (tanh(x)/x - 1) / u, the weight u x / tanh(x)).

tests/ops/test_vexp.py checks the resulting functions' accuracy.
"""
from __future__ import annotations

import mpmath as mp
import numpy as np

mp.mp.dps = 40
A, B = 1.0, 3.9375       # the erf branches (tl_erff)
MID = (A + B) / 2        # exactly representable
T = 0.5493               # the tanh branches (tl_tanhf): tanh(T) ~ 1/2


def remez(f, w, a, b, n, iters=25, grid=4000):
    """coefficients c[0..n-1] minimizing max |w(x) (f(x) - sum c_k x^k)| on
    [a, b] (no node may sit where w is 0), and that maximum"""
    xs = [(a + b) / 2 + (b - a) / 2 * mp.cos(mp.pi * (n - i) / n) for i in range(n + 1)]
    for _ in range(iters):
        M = mp.matrix(n + 1, n + 1)
        rhs = mp.matrix(n + 1, 1)
        for i, x in enumerate(xs):
            for k in range(n):
                M[i, k] = x ** k
            M[i, n] = (-1) ** i / w(x)
            rhs[i] = f(x)
        sol = mp.lu_solve(M, rhs)
        c = [sol[k] for k in range(n)]

        def err(x):
            return w(x) * (f(x) - sum(ck * x ** k for k, ck in enumerate(c)))

        pts = [a + (b - a) * mp.mpf(j) / grid for j in range(grid + 1)]
        ev = [err(x) for x in pts]
        ext = [0] + [j for j in range(1, grid) if (ev[j] - ev[j - 1]) * (ev[j + 1] - ev[j]) <= 0] + [grid]
        alt = []   # the largest |error| of each run of one sign
        for j in ext:
            if alt and mp.sign(ev[j]) == mp.sign(ev[alt[-1]]):
                if abs(ev[j]) > abs(ev[alt[-1]]):
                    alt[-1] = j
            else:
                alt.append(j)
        while len(alt) > n + 1:
            alt.pop(0 if abs(ev[alt[0]]) < abs(ev[alt[-1]]) else -1)
        if len(alt) < n + 1:
            break
        xs = [pts[j] for j in alt]
    return c, max(abs(e) for e in ev)


def c_literals(name, coeffs):
    print(f"{name}:")
    for k, c in enumerate(coeffs):
        print(f"  c{k} = {float(np.float32(float(c))):.17e}f")


def main():
    half = mp.log(2) / 2
    g = lambda r: (mp.exp(r) - 1 - r) / r ** 2
    # the asymmetric ends keep the nodes off r = 0, where the weight is 0
    c, e = remez(g, lambda r: r ** 2 / mp.exp(r), -half * 1.0001, half * 1.0003, 5)
    print(f"exp: relative error {mp.nstr(e, 3)}")
    c_literals("exp q(r) (c2 .. c6 of e^r)", c)

    s = lambda u: mp.erf(mp.sqrt(u)) / mp.sqrt(u) if u > 0 else 2 / mp.sqrt(mp.pi)
    c, e = remez(s, lambda u: 1 / s(u), mp.mpf(0), mp.mpf(A) ** 2, 7)
    c[0] -= 1   # erf = x + x (c0 - 1 + c1 u + ...): the small part rounds, not x
    print(f"erf |x| < {A}: relative error {mp.nstr(e, 3)}")
    c_literals("erf small (c0 - 1, c1 .. c6 in u = x^2)", c)

    c, e = remez(lambda t: mp.erfc(t + MID), lambda t: 1, mp.mpf(A) - MID, mp.mpf(B) - MID, 13)
    print(f"erfc {A} <= x < {B}: absolute error {mp.nstr(e, 3)} (2^{float(mp.log(e, 2)):.1f}), MID = {MID}")
    c_literals("erfc large (in t = x - MID)", c)

    th = lambda u: mp.tanh(mp.sqrt(u)) / mp.sqrt(u) if u > 0 else mp.mpf(1)
    g = lambda u: (th(u) - 1) / u if u > 0 else mp.mpf(-1) / 3
    # the lower end just off 0, where the weight is 0
    c, e = remez(g, lambda u: u / th(u), mp.mpf(T) ** 2 * mp.mpf("1e-6"), mp.mpf(T) ** 2, 5)
    print(f"tanh |x| < {T}: relative error {mp.nstr(e, 3)}")
    c_literals("tanh small (P in u = x^2: tanh = x + x u P)", c)


if __name__ == "__main__":
    main()
