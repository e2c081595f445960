/* torchlet.special's functions of the normal distribution, the Bessel and
 * Airy functions, the orthogonal polynomials and the incomplete gamma
 * functions, for the ufunc formulas (kernels/ufunc/special_<op>.h).
 *
 * Every function takes and returns double; the float32 loops convert the
 * argument to double and round the result once (TL_USPECIAL, tl_special.h).
 *
 * Algorithms (written for torchlet from the published methods):
 * - ndtri: Abramowitz & Stegun 26.2.23 as a first guess (error < 4.5e-4),
 *   then Halley steps on Phi(x) - p with Phi from erfc (relative accuracy in
 *   the lower tail); the upper half by symmetry, 1 - p being exact there.
 * - log_ndtr: log1p(-erfc(x / sqrt 2) / 2) above -1, log(erfcx(-x / sqrt 2) /
 *   2) - x^2 / 2 below (no underflow of Phi).
 * - erfcx: exp(x^2) erfc(x) with x^2 split into an exact head and a tail
 *   (exp's argument exact up to the tail), the asymptotic series beyond 26
 *   where erfc underflows; 2 exp(x^2) - erfcx(-x) for x < 0.
 * - J0, J1, Y0, Y1: the power series (DLMF 10.2.2, 10.8.1; long double) up to |x| = 17,
 *   Hankel's expansion (DLMF 10.17.3-4) beyond, its phase taken from sin x
 *   and cos x (exact argument reduction) rather than x - pi/4.
 * - K0, K1 and their scaled forms, and Ai for x > 1 (through K_1/3): the
 *   trapezoid rule on K_nu(z) = int_0^inf exp(-z cosh t) cosh(nu t) dt,
 *   which converges geometrically in the step for this analytic integrand.
 * - Ai: its Maclaurin series on [-8, 1], the oscillating expansion DLMF
 *   9.7.9 below -8.
 * - the orthogonal polynomials: PyTorch's branches (values at +-1, n < 0,
 *   the trigonometric forms for large n inside (-1, 1)), else the three-term
 *   recurrences.
 * - igamma / igammac: the regularized incomplete gamma functions, the power
 *   series of P below x = a + 1, Lentz's continued fraction for Q above.
 */
#ifndef TL_SPECIAL_FNS_H
#define TL_SPECIAL_FNS_H

#include "tl_special.h"

/* The Bessel series' accumulator: long double on the CPU. A CUDA device has
 * no long double, so there it is double (the series then carries less
 * headroom near its upper limit, |x| = 17). */
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
typedef double tl_special_wide;
#define tl_special_wide_abs fabs
#else
typedef long double tl_special_wide;
#define tl_special_wide_abs fabsl
#endif

/* The long scalar algorithms (series with trigonometric tails) are calls on
 * a CUDA device rather than inlined into each of a thread's unrolled
 * elements, which ran out of registers (ptxas spills); on the CPU they inline. */
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define TL_SPECIAL_HEAVY static __noinline__
#else
#define TL_SPECIAL_HEAVY static inline
#endif

#define TL_SPECIAL_SQRT2 1.41421356237309504880168872420969808
#define TL_SPECIAL_SQRTPI 1.77245385090551602729816748334114518
#define TL_SPECIAL_SQRT2PI 2.50662827463100050241576528481104525

/* ------------------------------------------------------------ normal distribution */

/* Phi(x) = erfc(-x / sqrt 2) / 2: relative accuracy where Phi is small */
static inline double tl_special_ndtr_lower(double x) { return 0.5 * erfc(-x / TL_SPECIAL_SQRT2); }

static inline double tl_special_ndtri(double p) {
    if (p != p || p < 0 || p > 1) return NAN;
    if (p == 0) return -INFINITY;
    if (p == 1) return INFINITY;
    if (p == 0.5) return 0;
    const double q = p < 0.5 ? p : 1 - p;   /* exact for p >= 1/2 */
    const double t = sqrt(-2 * log(q));
    double x = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) /
                         (1 + t * (1.432788 + t * (0.189269 + t * 0.001308))));
    for (int i = 0; i < 4; i++) {
        const double phi = exp(-0.5 * x * x) / TL_SPECIAL_SQRT2PI;
        if (phi == 0) break;
        const double u = (tl_special_ndtr_lower(x) - q) / phi;
        const double dx = u / (1 + 0.5 * x * u);   /* Halley: Phi'' = -x phi */
        x -= dx;
        if (fabs(dx) <= 1e-17 * fabs(x)) break;
    }
    return p < 0.5 ? x : -x;
}

/* erfcx(x) = exp(x^2) erfc(x) */
static inline double tl_special_erfcx_pos(double x) {
    if (x == INFINITY) return 0;
    if (x < 26) {
        /* x = hi + lo with hi of 26 bits: hi^2 is exact, the rest small */
        const double hi = (double)(float)x, lo = x - hi;
        return exp(hi * hi) * exp(lo * (hi + x)) * erfc(x);
    }
    /* 1 / (x sqrt pi) sum_k (-1)^k (2k - 1)!! / (2 x^2)^k */
    const double r = 1 / (2 * x * x);
    double term = 1, sum = 1;
    for (int k = 1; k < 12; k++) {
        term *= -(2.0 * k - 1) * r;
        sum += term;
    }
    return sum / (x * TL_SPECIAL_SQRTPI);
}
static inline double tl_special_erfcx(double x) {
    if (x != x) return x;
    if (x >= 0) return tl_special_erfcx_pos(x);
    if (x < -26.7) return INFINITY;   /* 2 exp(x^2) overflows */
    const double hi = (double)(float)x, lo = x - hi;
    const double e = exp(hi * hi) * exp(lo * (hi + x));
    return 2 * e - tl_special_erfcx_pos(-x);
}

static inline double tl_special_log_ndtr(double x) {
    if (x != x) return x;
    if (x > -1) return log1p(-0.5 * erfc(x / TL_SPECIAL_SQRT2));
    if (x == -INFINITY) return -INFINITY;
    const double t = -x / TL_SPECIAL_SQRT2;
    return log(0.5 * tl_special_erfcx(t)) - t * t;
}

/* ------------------------------------------------------------ modified Bessel I, scaled */

/* e^-|x| I_nu(x), nu = 0, 1: tl_special_bessel_i times e^-|x| up to 30 (its
 * series), beyond Hankel's expansion without the factor e^x:
 * sum_k (-1)^k a_k(nu) / x^k / sqrt(2 pi x), a_k = prod_{i <= k} (4 nu^2 - (2i - 1)^2) / (k! 8^k) */
static inline double tl_special_bessel_ie(int nu, double x) {
    const double ax = fabs(x);
    if (ax != ax) return x;
    if (ax == INFINITY) return (nu && x < 0) ? -0.0 : 0.0;
    double r;
    if (ax <= 30) {
        r = tl_special_bessel_i(nu, ax) * exp(-ax);
    } else {
        double a = 1, sum = 1;
        for (int k = 1; k < 40 && fabs(a) > sum * 1e-17; k++) {
            a *= -(4.0 * nu * nu - (2.0 * k - 1) * (2.0 * k - 1)) / (8.0 * k * ax);
            sum += a;
        }
        r = sum / sqrt(2 * TL_SPECIAL_PI * ax);
    }
    return (nu && x < 0) ? -r : r;
}
/* modified_bessel_i0 / i1: I_nu, NaN at +-inf as PyTorch's (i0 and
 * special_i1 give the limit, +-inf) */
static inline double tl_special_modified_bessel_i0(double x) {
    return fabs(x) == INFINITY ? NAN : tl_special_bessel_i(0, x);
}
static inline double tl_special_modified_bessel_i1(double x) {
    return fabs(x) == INFINITY ? NAN : tl_special_bessel_i(1, x);
}
static inline double tl_special_i0e(double x) { return tl_special_bessel_ie(0, x); }
static inline double tl_special_i1e(double x) { return tl_special_bessel_ie(1, x); }

/* ------------------------------------------------------------ Bessel J, Y */

#define TL_SPECIAL_EULER 0.577215664901532860606512090082402431

/* J_n(x) or Y_n(x) (n = 0, 1; x >= 0 for Y) */
static inline double tl_special_bessel_jy(int n, int want_y, double x) {
    const double ax = fabs(x);
    if (ax <= 17) {
        /* t_k = (-q)^k / (k! (k + n)!), q = x^2 / 4; J_n = (x/2)^n sum t_k,
         * Y_n = -(2/x)^n/pi [n = 1] + 2/pi log(x/2) J_n
         *       - (x/2)^n / pi sum (psi(k + 1) + psi(k + n + 1)) t_k */
        /* the terms grow to ~e^x / x before they cancel: summed in long
         * double (64-bit significands on x86), which keeps the error near
         * 1e-14 absolute at |x| = 17 */
        const tl_special_wide q = (tl_special_wide)ax * ax / 4;
        tl_special_wide t = 1, sj = 1, hk = 0, hkn = n ? 1 : 0;   /* H_k, H_(k+n) */
        tl_special_wide sy = 2 * -(tl_special_wide)TL_SPECIAL_EULER + hkn;
        tl_special_wide big = 1;
        for (int k = 1; k < 200; k++) {
            t *= -q / ((tl_special_wide)k * (tl_special_wide)(k + n));
            hk += 1.0L / k;
            hkn += 1.0L / (k + n);
            sj += t;
            sy += (hk + hkn - 2 * (tl_special_wide)TL_SPECIAL_EULER) * t;
            if (tl_special_wide_abs(t) > big) big = tl_special_wide_abs(t);
            if (k > q && tl_special_wide_abs(t) * (hk + hkn + 1) < (tl_special_wide)1e-21 * big) break;
        }
        const double half = ax / 2, xn = n ? half : 1;
        const double j = (double)sj * xn;
        if (!want_y) return (n && x < 0) ? -j : j;
        return (double)((n ? -1 / (TL_SPECIAL_PI * half) : 0) + 2 / TL_SPECIAL_PI * log(half) * (sj * xn) -
                        xn / TL_SPECIAL_PI * sy);
    }
    if (ax == INFINITY) return NAN;   /* PyTorch's value at +-inf */
    /* P = sum (-1)^k a_2k / x^2k, Q = sum (-1)^k a_2k+1 / x^2k+1,
     * a_k = prod_{i <= k} (4n^2 - (2i - 1)^2) / (k! 8^k) */
    const double mu = 4.0 * n * n;
    double a = 1, p = 1, qs = 0, prev = INFINITY;
    for (int k = 1; k < 60; k++) {
        const double odd = 2.0 * k - 1;
        a *= (mu - odd * odd) / (k * 8 * ax);
        if (fabs(a) > prev) break;   /* the expansion starts to diverge */
        prev = fabs(a);
        const double sgn = ((k / 2) % 2) ? -1 : 1;
        if (k % 2) qs += sgn * a; else p += sgn * a;
        if (fabs(a) < 1e-18) break;
    }
    /* omega = x - n pi/2 - pi/4: cos and sin from those of x */
    const double s = sin(ax), c = cos(ax);
    const double co = n ? (s - c) / TL_SPECIAL_SQRT2 : (c + s) / TL_SPECIAL_SQRT2;
    const double so = n ? -(s + c) / TL_SPECIAL_SQRT2 : (s - c) / TL_SPECIAL_SQRT2;
    const double f = sqrt(2 / (TL_SPECIAL_PI * ax));
    if (want_y) return f * (p * so + qs * co);
    const double j = f * (p * co - qs * so);
    return (n && x < 0) ? -j : j;
}
static inline double tl_special_bessel_j0(double x) {
    return x != x ? x : tl_special_bessel_jy(0, 0, x);
}
static inline double tl_special_bessel_j1(double x) {
    return x != x ? x : tl_special_bessel_jy(1, 0, x);
}
static inline double tl_special_bessel_y0(double x) {
    if (x != x) return x;
    if (x < 0) return NAN;
    if (x == 0) return -INFINITY;
    return tl_special_bessel_jy(0, 1, x);
}
static inline double tl_special_bessel_y1(double x) {
    if (x != x) return x;
    if (x < 0) return NAN;
    if (x == 0) return -INFINITY;
    return tl_special_bessel_jy(1, 1, x);
}

/* ------------------------------------------------------------ Bessel K */

/* e^z K_nu(z), z > 0 finite: the trapezoid rule on
 * int_0^inf exp(-z (cosh t - 1)) cosh(nu t) dt. The step is 0.1 (error
 * about exp(-2 pi d / h), d near pi/2 the half-width of the strip where the
 * integrand is analytic and decays) or a fraction of the width 1/sqrt(z) of
 * the peak at t = 0 for large z; the sum stops where the terms fall below
 * 1e-18 of it (they decrease monotonically in that tail). */
static inline double tl_special_bessel_k_scaled(double nu, double z) {
    const double h = z > 25 ? 0.5 / sqrt(z) : 0.1;
    double sum = 0.5;
    for (int i = 1; i < 100000; i++) {
        const double t = i * h, sh = sinh(0.5 * t);
        const double e = exp(-z * 2 * sh * sh) * (nu == 0 ? 1 : cosh(nu * t));   /* cosh t - 1 = 2 sinh^2(t/2) */
        sum += e;
        if (e < 1e-18 * sum) break;
    }
    return h * sum;
}
static inline double tl_special_bessel_k(int n, int scaled, double x) {
    if (x != x) return x;
    if (x < 0) return NAN;
    if (x == 0) return INFINITY;
    if (x == INFINITY) return 0;
    const double k = tl_special_bessel_k_scaled(n, x);
    return scaled ? k : k * exp(-x);
}
static inline double tl_special_modified_bessel_k0(double x) { return tl_special_bessel_k(0, 0, x); }
static inline double tl_special_modified_bessel_k1(double x) { return tl_special_bessel_k(1, 0, x); }
static inline double tl_special_scaled_modified_bessel_k0(double x) { return tl_special_bessel_k(0, 1, x); }
static inline double tl_special_scaled_modified_bessel_k1(double x) { return tl_special_bessel_k(1, 1, x); }

/* j0(x) = sin x / x */
static inline double tl_special_spherical_bessel_j0(double x) {
    if (x == 0) return 1;
    if (fabs(x) == INFINITY) return 0;
    return sin(x) / x;
}

/* ------------------------------------------------------------ Airy Ai */

TL_SPECIAL_HEAVY double tl_special_airy_ai(double x) {
    if (x != x || fabs(x) == INFINITY) return NAN;   /* PyTorch's value at +-inf */
    if (x > 1) {
        /* Ai(x) = sqrt(x / 3) / pi K_1/3(zeta), zeta = 2/3 x^3/2 */
        const double zeta = 2.0 / 3.0 * x * sqrt(x);
        if (zeta > 750) return 0;
        return sqrt(x / 3) / TL_SPECIAL_PI * exp(-zeta) * tl_special_bessel_k_scaled(1.0 / 3.0, zeta);
    }
    if (x >= -8) {
        /* Ai = Ai(0) f - |Ai'(0)| g, f = sum 3^k (1/3)_k x^3k / (3k)!,
         * g = sum 3^k (2/3)_k x^(3k+1) / (3k+1)! */
        const double x3 = x * x * x;
        double f = 1, g = x, tf = 1, tg = x;
        for (int k = 1; k < 100; k++) {
            tf *= x3 / ((3.0 * k) * (3.0 * k - 1));
            tg *= x3 / ((3.0 * k + 1) * (3.0 * k));
            f += tf;
            g += tg;
            if (fabs(tf) + fabs(tg) < 1e-18 * (fabs(f) + fabs(g)) && k > 3) break;
        }
        return 0.355028053887817239260063186004183177 * f - 0.258819403792806798405183560189203963 * g;
    }
    /* x < -8: Ai(-y) = (cos(zeta - pi/4) sum_k (-1)^k u_2k / zeta^2k
     *                 + sin(zeta - pi/4) sum_k (-1)^k u_2k+1 / zeta^2k+1) / (sqrt(pi) y^1/4),
     * u_k = (6k-5)(6k-3)(6k-1) / ((2k-1) 216 k) u_k-1 */
    const double y = -x, zeta = 2.0 / 3.0 * y * sqrt(y);
    double u = 1, se = 1, so = 0, prev = INFINITY;
    for (int k = 1; k < 60; k++) {
        u *= (6.0 * k - 5) * (6.0 * k - 3) * (6.0 * k - 1) / ((2.0 * k - 1) * 216 * k * zeta);
        if (fabs(u) > prev) break;
        prev = fabs(u);
        const double sgn = ((k / 2) % 2) ? -1 : 1;
        if (k % 2) so += sgn * u; else se += sgn * u;
        if (fabs(u) < 1e-18) break;
    }
    const double s = sin(zeta), c = cos(zeta);
    return ((c + s) * se + (s - c) * so) / (TL_SPECIAL_SQRT2 * TL_SPECIAL_SQRTPI * sqrt(sqrt(y)));
}

/* ------------------------------------------------------------ orthogonal polynomials
 * n arrives as a floating value and is truncated to an integer, as PyTorch's
 * kernels do; NaN or an n out of int64's range converts to int64's minimum
 * there (x86's conversion), so the value is 0 as for any n < 0. */
#define TL_SPECIAL_POLY_N(nd)                              \
    if ((nd) != (nd) || fabs(nd) >= 9.2e18) return 0;     \
    const int64_t n = (int64_t)(nd)

TL_SPECIAL_HEAVY double tl_special_chebyshev_t_n(double x, int64_t n) {
    if (n < 0) return 0;
    if (fabs(x) == 1) return (x > 0 || n % 2 == 0) ? 1 : -1;
    if (n > 6 && fabs(x) < 1) return cos((double)n * acos(x));
    if (n == 0) return 1;
    double p = 1, q = x;
    for (int64_t k = 2; k <= n; k++) {
        const double r = (x + x) * q - p;
        p = q;
        q = r;
    }
    return q;
}
TL_SPECIAL_HEAVY double tl_special_chebyshev_u_n(double x, int64_t n) {
    if (n < 0) return 0;
    if (fabs(x) == 1) return (x > 0 || n % 2 == 0) ? (double)(n + 1) : -(double)(n + 1);
    if (n > 8 && fabs(x) < 1) {
        const double th = acos(x);
        if (sin(th) != 0) return sin((double)(n + 1) * th) / sin(th);
        return (double)(n + 1) * cos((double)(n + 1) * th) / x;
    }
    if (n == 0) return 1;
    double p = 1, q = x + x;
    for (int64_t k = 2; k <= n; k++) {
        const double r = (x + x) * q - p;
        p = q;
        q = r;
    }
    return q;
}
TL_SPECIAL_HEAVY double tl_special_chebyshev_v_n(double x, int64_t n) {
    if (n < 0) return 0;
    if (fabs(x) == 1) {
        if (x > 0) return 1;
        return n % 2 == 0 ? (double)(n + n + 1) : -(double)(n + n + 1);
    }
    if (n > 8 && fabs(x) < 1) {
        const double th = acos(x);
        if (sin(th / 2) != 1) return cos((n + 0.5) * th) / cos(th / 2);
        return n % 2 == 0 ? (double)(n + n + 1) : -(double)(n + n + 1);
    }
    if (n == 0) return 1;
    double p = 1, q = x + x - 1;
    for (int64_t k = 2; k <= n; k++) {
        const double r = (x + x) * q - p;
        p = q;
        q = r;
    }
    return q;
}
TL_SPECIAL_HEAVY double tl_special_chebyshev_w_n(double x, int64_t n) {
    if (n < 0) return 0;
    if (fabs(x) == 1) {
        if (x > 0) return (double)(n + n + 1);
        return n % 2 == 0 ? 1 : -1;
    }
    if (n > 8 && fabs(x) < 1) {
        const double th = acos(x);
        if (cos(th / 2) != 1) return sin((n + 0.5) * th) / sin(th / 2);
        if (x > 0) return (double)(n + n + 1);
        return n % 2 == 0 ? 1 : -1;
    }
    if (n == 0) return 1;
    double p = 1, q = x + x + 1;
    for (int64_t k = 2; k <= n; k++) {
        const double r = (x + x) * q - p;
        p = q;
        q = r;
    }
    return q;
}
/* the polynomials of n as a floating value; the shifted ones on [0, 1]:
 * P*(x) = P(2x - 1) */
#define TL_SPECIAL_CHEBYSHEV(name, kind, arg)                             \
    static inline double tl_special_##name(double x, double nd) {         \
        TL_SPECIAL_POLY_N(nd);                                            \
        return tl_special_chebyshev_##kind##_n(arg, n);                   \
    }
TL_SPECIAL_CHEBYSHEV(chebyshev_polynomial_t, t, x)
TL_SPECIAL_CHEBYSHEV(chebyshev_polynomial_u, u, x)
TL_SPECIAL_CHEBYSHEV(chebyshev_polynomial_v, v, x)
TL_SPECIAL_CHEBYSHEV(chebyshev_polynomial_w, w, x)
TL_SPECIAL_CHEBYSHEV(shifted_chebyshev_polynomial_t, t, x + x - 1)
TL_SPECIAL_CHEBYSHEV(shifted_chebyshev_polynomial_u, u, x + x - 1)
TL_SPECIAL_CHEBYSHEV(shifted_chebyshev_polynomial_v, v, x + x - 1)
TL_SPECIAL_CHEBYSHEV(shifted_chebyshev_polynomial_w, w, x + x - 1)
/* physicists' Hermite: H_k+1 = 2x H_k - 2k H_k-1 */
static inline double tl_special_hermite_polynomial_h(double x, double nd) {
    TL_SPECIAL_POLY_N(nd);
    if (n < 0) return 0;
    if (n == 0) return 1;
    double p = 1, q = x + x;
    for (int64_t k = 1; k < n; k++) {
        const double r = (x + x) * q - 2.0 * (double)k * p;
        p = q;
        q = r;
    }
    return q;
}
/* probabilists' Hermite: He_k+1 = x He_k - k He_k-1 */
static inline double tl_special_hermite_polynomial_he(double x, double nd) {
    TL_SPECIAL_POLY_N(nd);
    if (n < 0) return 0;
    if (n == 0) return 1;
    double p = 1, q = x;
    for (int64_t k = 1; k < n; k++) {
        const double r = x * q - (double)k * p;
        p = q;
        q = r;
    }
    return q;
}
/* Laguerre: (k+1) L_k+1 = (2k + 1 - x) L_k - k L_k-1 */
static inline double tl_special_laguerre_polynomial_l(double x, double nd) {
    TL_SPECIAL_POLY_N(nd);
    if (n < 0) return 0;
    if (x == 0 || n == 0) return 1;
    double p = 1, q = 1 - x;
    for (int64_t k = 1; k < n; k++) {
        const double r = ((2.0 * k + 1 - x) * q - (double)k * p) / (double)(k + 1);
        p = q;
        q = r;
    }
    return q;
}
/* Legendre: (k+1) P_k+1 = (2k + 1) x P_k - k P_k-1 */
static inline double tl_special_legendre_polynomial_p(double x, double nd) {
    TL_SPECIAL_POLY_N(nd);
    if (n < 0) return 0;
    if (fabs(x) == 1) return (x > 0 || n % 2 == 0) ? 1 : -1;
    if (n == 0) return 1;
    double p = 1, q = x;
    for (int64_t k = 1; k < n; k++) {
        const double r = ((2.0 * k + 1) * x * q - (double)k * p) / (double)(k + 1);
        p = q;
        q = r;
    }
    return q;
}

/* ------------------------------------------------------------ incomplete gamma */

/* P(a, x) (lower = 1) or Q(a, x) = 1 - P for a > 0, 0 < x < inf */
static inline double tl_special_igamma_core(double a, double x, int lower) {
    const double lpre = a * log(x) - x - tl_special_lgamma(a);   /* log(x^a e^-x / Gamma(a)) */
    if (x < a + 1) {
        /* P = x^a e^-x / Gamma(a + 1) sum_n x^n / ((a + 1) ... (a + n)) */
        double term = 1, sum = 1;
        for (int n = 1; n < 100000; n++) {
            term *= x / (a + n);
            sum += term;
            if (term < sum * (TL_SPECIAL_EPS / 4)) break;
        }
        const double pv = exp(lpre) * sum / a;
        return lower ? pv : 1 - pv;
    }
    /* Q = x^a e^-x / Gamma(a) / (x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) / ...)), Lentz */
    const double tiny = 1e-300;
    double b = x + 1 - a, c = 1 / tiny, d = 1 / b, hq = d;
    for (int i = 1; i < 100000; i++) {
        const double an = -i * (i - a);
        b += 2;
        d = an * d + b;
        if (fabs(d) < tiny) d = tiny;
        c = b + an / c;
        if (fabs(c) < tiny) c = tiny;
        d = 1 / d;
        const double del = d * c;
        hq *= del;
        if (fabs(del - 1) < TL_SPECIAL_EPS / 2) break;
    }
    const double qv = exp(lpre) * hq;
    return lower ? 1 - qv : qv;
}
/* PyTorch's edge cases: NaN for a < 0 or x < 0; P(0, x > 0) = 1; P(a, 0) = 0;
 * P(inf, x) = 0 (NaN where x is inf too); P(a, inf) = 1 */
static inline double tl_special_igamma_either(double a, double x, int lower) {
    if (a != a || x != x || a < 0 || x < 0) return NAN;
    if (a == 0) return x > 0 ? (lower ? 1 : 0) : NAN;
    if (x == 0) return lower ? 0 : 1;
    if (a == INFINITY) return x == INFINITY ? NAN : (lower ? 0 : 1);
    if (x == INFINITY) return lower ? 1 : 0;
    return tl_special_igamma_core(a, x, lower);
}
static inline double tl_special_igamma(double a, double x) { return tl_special_igamma_either(a, x, 1); }
static inline double tl_special_igammac(double a, double x) { return tl_special_igamma_either(a, x, 0); }

#endif
