/* Special functions for the ufunc formulas: lgamma, digamma, trigamma,
 * polygamma (through the Hurwitz zeta function), erfinv, the modified Bessel
 * functions i0 / i1 and sinc.
 *
 * Every function takes and returns double; the float formulas (float32,
 * float16, bfloat16) call them through TL_USPECIAL, which converts the
 * argument to double and rounds the result once, so float results are the
 * double value correctly rounded up to the double's own error (PyTorch's
 * float kernels run the same algorithms in float and err by a few ulp).
 * lgamma is the exception: libm's reentrant lgammaf_r / lgamma_r (the plain
 * lgamma writes the global signgam, a data race between loop threads).
 *
 * Algorithms (written for torchlet from the published methods):
 * - digamma: reflection psi(1 - x) - pi / tan(pi x) for x < 0, the recurrence
 *   psi(x) = psi(x + 1) - 1/x up to x >= 10, then the asymptotic series
 *   log x - 1/(2x) - sum B_2k / (2k x^2k) (Cephes' psi, as PyTorch's
 *   calc_digamma: same poles, signs and NaNs).
 * - polygamma(n >= 1, x) = (-1)^(n+1) n! zeta(n + 1, x), zeta the Hurwitz
 *   zeta function by Euler-Maclaurin summation (Cephes' zeta): nine terms
 *   directly (and until q + i > 9), then the tail integral and the
 *   Bernoulli correction terms.
 * - erfinv: M. Giles' single-precision approximation ("Approximating the
 *   erfinv function", GPU Computing Gems, 2011) as a first guess, then Newton
 *   steps on erf (|y| < 1/2) or on log erfc against the exact 1 - |y| (the
 *   tails), which double the correct digits each time.
 * - i0, i1: the power series sum (x^2/4)^k / (k! (k + nu)!) up to |x| = 30
 *   (positive terms: no cancellation), Hankel's asymptotic expansion
 *   e^x / sqrt(2 pi x) sum_k (-1)^k a_k(nu) / x^k beyond (its smallest term
 *   is below 1e-20 there); e^x is taken in two halves so that the result
 *   overflows only where I_nu itself does.
 */
#ifndef TL_SPECIAL_H
#define TL_SPECIAL_H

#include <math.h>
#include <stdint.h>

#include "tl_mvec.h"   /* libmvec's erf, exp, log ... for the branch-free float loops */

#if defined(__cplusplus)
/* CUDA programs (NVRTC, the host shim): the device lgamma is reentrant */
static inline double tl_special_lgamma(double x) { return lgamma(x); }
static inline float tl_special_lgammaf(float x) { return lgammaf(x); }
#else
/* glibc's reentrant lgamma (math.h declares them under gnu11; repeated here
 * for a strict ISO compilation) */
extern double lgamma_r(double x, int *signp);
extern float lgammaf_r(float x, int *signp);

static inline double tl_special_lgamma(double x) {
    int sign;
    return lgamma_r(x, &sign);
}
static inline float tl_special_lgammaf(float x) {
    int sign;
    return lgammaf_r(x, &sign);
}
#endif

#define TL_SPECIAL_PI 3.14159265358979323846264338327950288
/* GCC's unroll pragma (a CUDA program unrolls on its own) */
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define TL_SPECIAL_UNROLL(n)
#else
#define TL_SPECIAL_PRAGMA(x) _Pragma(#x)
#define TL_SPECIAL_UNROLL(n) TL_SPECIAL_PRAGMA(GCC unroll n)
#endif

/* lgamma for the float compute type where 0 < x < inf, branch-free (the loop
 * vectorizes): Lanczos' approximation with g = 7 and Godfrey's nine
 * coefficients, relative error ~1e-15 in Gamma, so ~1e-15 absolute in its
 * log; in double, that is far below a float ulp even next to lgamma's zeros
 * at 1 and 2 (|lgamma(1 + 2^-23)| = 6.9e-8). Below 1/2 lgamma(x + 1) - log x.
 * The other arguments (poles, negatives, inf, NaN) take lgammaf_r
 * (lgamma.h's ufunc_fallback). */
static inline float tl_special_lgammaf_pos(float xf) {
    const double x0 = xf, small = x0 < 0.5;
    const double x = small ? x0 + 1 : x0, z = x - 1, t = x + 6.5;
    const double a = 0.99999999999980993 + 676.5203681218851 / (z + 1) - 1259.1392167224028 / (z + 2) +
                     771.32342877765313 / (z + 3) - 176.61502916214059 / (z + 4) + 12.507343278686905 / (z + 5) -
                     0.13857109526572012 / (z + 6) + 9.9843695780195716e-6 / (z + 7) +
                     1.5056327351493116e-7 / (z + 8);
    const double r = 0.91893853320467274178 + (x - 0.5) * log(t) - t + log(a);   /* log sqrt(2 pi) + ... */
    return (float)(small ? r - log(x0) : r);
}
/* DBL_EPSILON, spelled out: a CUDA program includes no header */
#define TL_SPECIAL_EPS 2.220446049250313080847263336181640625e-16

/* psi(x), Cephes' method (see the header comment) */
static inline double tl_special_digamma_pos(double x) {
    double acc = 0;
    while (x < 10) {
        acc -= 1 / x;
        x += 1;
    }
    if (x == 10) return acc + 2.25175258906672110764;   /* psi(10), exactly as the series would round */
    double series = 0;
    if (x < 1e17) {
        /* B_2k / (2k), k = 1 .. 7, in z = 1/x^2 (Horner) */
        const double z = 1 / (x * x);
        series = z * (1.0 / 12 + z * (-1.0 / 120 + z * (1.0 / 252 + z * (-1.0 / 240 + z * (1.0 / 132
                 + z * (-691.0 / 32760 + z * (1.0 / 12)))))));
    }
    return acc + log(x) - 0.5 / x - series;
}

/* digamma for the float compute type where 0 < x < inf, branch-free (the
 * loop vectorizes): always ten recurrence steps, psi(x) = psi(x + 10) -
 * sum 1/(x + k), then the asymptotic series at x + 10 >= 10; in double, so
 * the sum's rounding stays far below a float ulp (also around the root
 * 1.4616). The other arguments take tl_special_digamma (digamma.h's
 * ufunc_fallback). */
static inline float tl_special_digammaf_pos(float xf) {
    const double x = xf;
    double acc = 0;
    for (int k = 0; k < 10; k++) acc += 1 / (x + k);
    const double y = x + 10, z = 1 / (y * y);
    const double series = z * (1.0 / 12 + z * (-1.0 / 120 + z * (1.0 / 252 + z * (-1.0 / 240 + z * (1.0 / 132
                          + z * (-691.0 / 32760 + z * (1.0 / 12)))))));
    return (float)(log(y) - 0.5 / y - series - acc);
}

static inline double tl_special_digamma(double x) {
    if (x == 0) return copysign(INFINITY, -x);   /* psi(+-0) = -+inf, as scipy and the C standard's gamma */
    if (x < 0) {
        if (x == trunc(x)) return NAN;           /* poles at the negative integers */
        double ipart;
        const double frac = modf(x, &ipart);     /* tan(pi * frac) is exact where tan(pi * x) is not */
        return tl_special_digamma_pos(1 - x) - TL_SPECIAL_PI / tan(TL_SPECIAL_PI * frac);
    }
    return tl_special_digamma_pos(x);   /* NaN falls through the loop: log(NaN) */
}

/* Hurwitz zeta(s, q) = sum_{k >= 0} (k + q)^-s by Euler-Maclaurin */
static inline double tl_special_zeta(double s, double q) {
    /* (2k)! / B_2k, k = 1 .. 12: the Euler-Maclaurin correction denominators */
    static const double euler_maclaurin[] = {
        12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
        -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
        1.8152105401943546773e17, -7.1661652561756670113e18};
    if (s == 1) return INFINITY;
    if (s < 1) return NAN;
    if (q == INFINITY) return 0;   /* every term is 0 (the sums below would make inf * 0) */
    if (q <= 0) {
        if (q == floor(q)) return INFINITY;
        if (s != floor(s)) return NAN;   /* q^-s is not real */
    }
    double sum = pow(q, -s), a = q, b = 0;
    int i = 0;
    while (i < 9 || a <= 9) {
        i += 1;
        a += 1;
        b = pow(a, -s);
        sum += b;
        if (fabs(b / sum) < TL_SPECIAL_EPS / 2) return sum;
    }
    const double w = a;
    sum += b * w / (s - 1) - 0.5 * b;
    double fac = 1, k = 0;
    for (int j = 0; j < 12; j++) {
        fac *= s + k;
        b /= w;
        const double t = fac * b / euler_maclaurin[j];
        sum += t;
        if (fabs(t / sum) < TL_SPECIAL_EPS / 2) return sum;
        k += 1;
        fac *= s + k;
        b /= w;
        k += 1;
    }
    return sum;
}

/* polygamma(n, x): digamma, else (-1)^(n+1) n! zeta(n + 1, x) (trigamma too:
 * the asymptotic series PyTorch uses for it stops at 1e-9) */
static inline double tl_special_polygamma(double n, double x) {
    const int64_t k = (int64_t)n;
    if (k == 0) return tl_special_digamma(x);
    return ((k % 2) ? 1.0 : -1.0) * exp(tl_special_lgamma(n + 1)) * tl_special_zeta(n + 1, x);
}

/* trigamma at its poles (x a non-positive integer) as PyTorch computes it:
 * the reflection -pi^2 / sin^2(pi x) with sin(pi x) rounded in the compute
 * type (finite but for 0, e.g. 2.0178e13 at -8 in float), six recurrence
 * steps and the asymptotic series at 1 - x + 6. The OpInfo samples of
 * integer dtypes hit these values. */
#define TL_SPECIAL_TRIGAMMA_POLE_BODY(T, pi)                                       \
    const T s = sin_fn(pi * x);                                                   \
    T r = -(pi * pi) / (s * s), y = 1 - x;                                        \
    for (int i = 0; i < 6; i++) {                                                 \
        r += 1 / (y * y);                                                         \
        y += 1;                                                                   \
    }                                                                             \
    const T iyy = 1 / (y * y);                                                    \
    r += (1 + 1 / (2 * y) + iyy * ((T)1 / 6 - iyy * ((T)1 / 30 - iyy * ((T)1 / 42)))) / y; \
    return -r;
static inline double tl_special_trigamma_pole(double x) {
#define sin_fn sin
    TL_SPECIAL_TRIGAMMA_POLE_BODY(double, TL_SPECIAL_PI)
#undef sin_fn
}
static inline float tl_special_trigamma_polef(float x) {
#define sin_fn sinf
    TL_SPECIAL_TRIGAMMA_POLE_BODY(float, (float)TL_SPECIAL_PI)
#undef sin_fn
}
#define TL_SPECIAL_TRIGAMMA_POLE(x) _Generic((x), double: tl_special_trigamma_pole((double)(x)), \
                                             default: tl_special_trigamma_polef((float)(x)))

/* Giles' single-precision erfinv(ay) / ay for 0 <= ay < 1, both branches
 * evaluated and one selected (branch-free: the float loops vectorize) */
static inline double tl_special_erfinv_guess(double ay) {
    const double w = -log((1 - ay) * (1 + ay));
    const double c = w - 2.5, t = sqrt(w) - 3;
    double p = 2.81022636e-08;
    p = 3.43273939e-07 + p * c;
    p = -3.5233877e-06 + p * c;
    p = -4.39150654e-06 + p * c;
    p = 0.00021858087 + p * c;
    p = -0.00125372503 + p * c;
    p = -0.00417768164 + p * c;
    p = 0.246640727 + p * c;
    p = 1.50140941 + p * c;
    double q = -0.000200214257;
    q = 0.000100950558 + q * t;
    q = 0.00134934322 + q * t;
    q = -0.00367342844 + q * t;
    q = 0.00573950773 + q * t;
    q = -0.0076224613 + q * t;
    q = 0.00943887047 + q * t;
    q = 1.00167406 + q * t;
    q = 2.83297682 + q * t;
    return (w < 5 ? p : q) * ay;
}

#define TL_SPECIAL_2_SQRTPI 1.12837916709551257390

/* erfinv(y) in double: Giles' guess, then Newton steps on erf(x) - |y| or, in
 * the tails, on log erfc(x) - log(1 - |y|) (1 - |y| is exact there and erf
 * has no digits left; the log makes the step nearly linear in x^2, which
 * matters where the guess, fitted for float, is extrapolated: |y| > 1 - 2^-24).
 * The guess is good to ~1e-7, each step squares the error: stop after the
 * step that corrected less than 1e-9 (two steps but for the far tails). */
static inline double tl_special_erfinv(double y) {
    if (!(fabs(y) <= 1)) return NAN;              /* |y| > 1 and NaN */
    if (fabs(y) == 1) return copysign(INFINITY, y);
    const double ay = fabs(y), tail = 1 - ay;     /* exact for ay >= 1/2 (Sterbenz) */
    double x = tl_special_erfinv_guess(ay);
    for (int i = 0; i < 8; i++) {
        const double d = TL_SPECIAL_2_SQRTPI * exp(-x * x);
        double step;
        if (ay < 0.5) {
            step = (erf(x) - ay) / d;
        } else {
            const double c = erfc(x);
            step = (log(tail) - log(c)) * c / d;
        }
        x -= step;
        if (fabs(step) <= 1e-9 * fabs(x)) break;
    }
    return copysign(x, y);
}

/* erfinv for the float compute type: in double, the guess and one Newton
 * step (error ~x * 1e-14 after it, far below float's ulp), without branches
 * so that the loop vectorizes (libmvec's erf / erfc / exp / log) */
static inline float tl_special_erfinvf(float yf) {
    const double y = yf, ay = fabs(y);
    const double a = ay < 1 ? ay : 0;             /* keeps the guess finite; fixed up below */
    const double x0 = tl_special_erfinv_guess(a);
    const double e = erf(x0) - a, ec = (1 - a) - erfc(x0);
    const double x = x0 - (a < 0.5 ? e : ec) / (TL_SPECIAL_2_SQRTPI * exp(-x0 * x0));
    const double r = ay < 1 ? x : ay == 1 ? INFINITY : NAN;   /* NaN fails both tests */
    return (float)copysign(r, y);
}

/* modified Bessel function I_nu(x), nu = 0 or 1 (see the header comment) */
static inline double tl_special_bessel_i(int nu, double x) {
    const double ax = fabs(x);
    if (ax != ax) return x;
    if (ax == INFINITY) return nu && x < 0 ? -INFINITY : INFINITY;
    double r;
    if (ax <= 30) {
        const double q = ax * ax / 4;
        double term = nu ? ax / 2 : 1, sum = term;
        for (int k = 1; k < 500; k++) {
            term *= q / ((double)k * (double)(k + nu));
            sum += term;
            if (term <= sum * (TL_SPECIAL_EPS / 4)) break;
        }
        r = sum;
    } else {
        const double mu = 4.0 * nu * nu;
        double term = 1, sum = 1;
        for (int k = 1; k < 40; k++) {
            const double odd = 2.0 * k - 1;
            term *= -(mu - odd * odd) / (k * 8 * ax);
            sum += term;
            if (fabs(term) <= sum * (TL_SPECIAL_EPS / 4)) break;
        }
        const double half = exp(ax / 2);   /* e^ax = half * half: finite up to where I_nu overflows */
        r = half * (half / sqrt(2 * TL_SPECIAL_PI * ax) * sum);
    }
    return (nu && x < 0) ? -r : r;   /* I0 is even, I1 odd */
}
/* I_nu for the float compute type where |x| < inf, branch-free (the loop
 * vectorizes): both forms with a fixed number of terms, in double, one
 * selected: the series (40 terms: the last is below 1e-12 of the sum for
 * |x| <= 15) and Hankel's expansion beyond 15 (12 terms: below 1e-11). */
static inline float tl_special_bessel_if(int nu, float xf) {
    const double ax = fabs((double)xf), q = ax * ax / 4;
    double term = nu ? ax / 2 : 1, sum = term;
    TL_SPECIAL_UNROLL(40)   /* unrolled, the element loop around it vectorizes */
    for (int k = 1; k <= 40; k++) {
        term *= q / ((double)k * (double)(k + nu));
        sum += term;
    }
    const double mu = 4.0 * nu * nu, big = ax > 15 ? ax : 15;   /* big: keeps the unused branch finite */
    double hterm = 1, hsum = 1;
    TL_SPECIAL_UNROLL(12)
    for (int k = 1; k <= 12; k++) {
        const double odd = 2.0 * k - 1;
        hterm *= -(mu - odd * odd) / (k * 8 * big);
        hsum += hterm;
    }
    const double half = exp(big / 2);
    const double r = ax <= 15 ? sum : half * (half / sqrt(2 * TL_SPECIAL_PI * big) * hsum);
    return (float)((nu && xf < 0) ? -r : r);
}
static inline float tl_special_i0f_finite(float x) { return tl_special_bessel_if(0, x); }
static inline float tl_special_i1f_finite(float x) { return tl_special_bessel_if(1, x); }
static inline double tl_special_i0(double x) { return tl_special_bessel_i(0, x); }
static inline double tl_special_i1(double x) { return tl_special_bessel_i(1, x); }

/* sinc(x) = sin(pi x) / (pi x), 1 at 0 (PyTorch's: the product in the compute type) */
static inline double tl_special_sinc(double x) {
    if (x == 0) return 1;
    const double px = TL_SPECIAL_PI * x;
    return sin(px) / px;
}
static inline float tl_special_sincf(float x) {
    if (x == 0) return 1;
    const float px = (float)TL_SPECIAL_PI * x;
    return sinf(px) / px;
}

/* f(x) in the compute type of x: double for float64, the double function
 * rounded once for the float compute type */
#define TL_USPECIAL(fn, x) _Generic((x), double: tl_special_##fn((double)(x)), \
                                    default: (float)tl_special_##fn((double)(x)))
#define TL_USPECIAL2(fn, a, x) _Generic((x), double: tl_special_##fn((double)(a), (double)(x)), \
                                        default: (float)tl_special_##fn((double)(a), (double)(x)))

#endif
