/* One-dimensional complex FFT of any length (fft_plan.h).
 *
 * Stockham autosort passes (no bit reversal): a pass of radix r over the
 * current length len = r * m reads x[q + s*(p + k*m)] for k < r, takes their
 * r-point DFT and writes y[q + s*(r*p + j)] times the twiddle w^(p*j*s)
 * (w = exp(-2 pi i / n)); the next pass works on y with s *= r, len = m.
 * Radix 4, 2 and 3 have written-out butterflies, other factors up to
 * TL_FFT_MAX_DIRECT_PRIME a direct DFT from the twiddle table. A length with
 * a larger prime factor goes through Bluestein's chirp-z: a circular
 * convolution of length 2^k >= 2n - 1 done with two 2^k transforms.
 *
 * Plans (factors, twiddles, Bluestein's chirp and its transform) are cached
 * for the last TL_FFT_CACHE lengths: building the twiddles of 2^20 points
 * costs as much as a transform. Why our own code: numpy's pocketfft has no C
 * API (it is a C++ template inside numpy's extension module); this file is
 * the small mixed-radix + Bluestein design pocketfft also uses. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fft_plan.h"
#include "tl_error.h"

#define TL_FFT_CACHE 16
#define TL_FFT_MAX_FACTORS 64

struct tl_fft_plan {
    int64_t n;
    int refs;
    int nfac;
    int64_t fac[TL_FFT_MAX_FACTORS];
    double _Complex *tw;     /* tw[k] = exp(-2 pi i k / n), k < n (direct plans) */
    /* Bluestein: sub is the 2^k plan, chirp[k] = exp(-i pi k^2 / n), bft = FFT(b) / m */
    tl_fft_plan *sub;
    double _Complex *chirp, *bft;
    int64_t m;
};

static void plan_free(tl_fft_plan *p) {
    if (!p) return;
    if (p->sub) tl_fft_plan_release(p->sub);
    free(p->tw);
    free(p->chirp);
    free(p->bft);
    free(p);
}

void tl_fft_plan_release(tl_fft_plan *p) {
    if (p && __atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL) == 0) plan_free(p);
}

static tl_fft_plan *plan_build(int64_t n);

int64_t tl_fft_plan_scratch(const tl_fft_plan *p) { return p->sub ? 2 * p->m + tl_fft_plan_scratch(p->sub) : p->n; }

/* ---------------------------------------------------------------- passes */
typedef double _Complex cplx;

/* a * b without C's Annex G NaN recovery (finite twiddles: the plain formula) */
static inline cplx cmul(cplx a, cplx b) {
    const double ar = creal(a), ai = cimag(a), br = creal(b), bi = cimag(b);
    return CMPLX(ar * br - ai * bi, ar * bi + ai * br);
}
/* a times i (forward: -i) */
static inline cplx mul_i(cplx a, int forward) {
    return forward ? CMPLX(cimag(a), -creal(a)) : CMPLX(-cimag(a), creal(a));
}
static inline cplx twiddle(const cplx *tw, int64_t k, int forward) { return forward ? tw[k] : conj(tw[k]); }

static void pass2(int64_t m, int64_t s, const cplx *x, cplx *y, const cplx *tw, int forward) {
    for (int64_t p = 0; p < m; p++) {
        const cplx w1 = twiddle(tw, p * s, forward);
        const cplx *x0 = x + s * p, *x1 = x0 + s * m;
        cplx *y0 = y + s * 2 * p, *y1 = y0 + s;
        for (int64_t q = 0; q < s; q++) {
            const cplx a0 = x0[q], a1 = x1[q];
            y0[q] = a0 + a1;
            y1[q] = p ? cmul(a0 - a1, w1) : a0 - a1;
        }
    }
}

static void pass4(int64_t m, int64_t s, const cplx *x, cplx *y, const cplx *tw, int forward) {
    for (int64_t p = 0; p < m; p++) {
        const cplx w1 = twiddle(tw, p * s, forward), w2 = twiddle(tw, 2 * p * s, forward),
                   w3 = twiddle(tw, 3 * p * s, forward);
        const cplx *x0 = x + s * p, *x1 = x0 + s * m, *x2 = x1 + s * m, *x3 = x2 + s * m;
        cplx *y0 = y + s * 4 * p, *y1 = y0 + s, *y2 = y1 + s, *y3 = y2 + s;
        for (int64_t q = 0; q < s; q++) {
            const cplx s02 = x0[q] + x2[q], d02 = x0[q] - x2[q], s13 = x1[q] + x3[q];
            const cplx d13 = mul_i(x1[q] - x3[q], forward);
            y0[q] = s02 + s13;
            if (p) {
                y1[q] = cmul(d02 + d13, w1);
                y2[q] = cmul(s02 - s13, w2);
                y3[q] = cmul(d02 - d13, w3);
            } else {
                y1[q] = d02 + d13;
                y2[q] = s02 - s13;
                y3[q] = d02 - d13;
            }
        }
    }
}

static void pass3(int64_t m, int64_t s, const cplx *x, cplx *y, const cplx *tw, int forward) {
    const double sin60 = 0.86602540378443864676;
    for (int64_t p = 0; p < m; p++) {
        const cplx w1 = twiddle(tw, p * s, forward), w2 = twiddle(tw, 2 * p * s, forward);
        const cplx *x0 = x + s * p, *x1 = x0 + s * m, *x2 = x1 + s * m;
        cplx *y0 = y + s * 3 * p, *y1 = y0 + s, *y2 = y1 + s;
        for (int64_t q = 0; q < s; q++) {
            const cplx sum = x1[q] + x2[q];
            const cplx m1 = x0[q] - 0.5 * sum, m2 = sin60 * mul_i(x1[q] - x2[q], forward);
            y0[q] = x0[q] + sum;
            y1[q] = cmul(m1 + m2, w1);
            y2[q] = cmul(m1 - m2, w2);
        }
    }
}

/* any radix r <= TL_FFT_MAX_DIRECT_PRIME: a direct r-point DFT */
static void pass_any(int64_t r, int64_t m, int64_t s, const cplx *x, cplx *y, const cplx *tw, int64_t n,
                     int forward) {
    cplx a[TL_FFT_MAX_DIRECT_PRIME + 1], w[TL_FFT_MAX_DIRECT_PRIME + 1], rt[TL_FFT_MAX_DIRECT_PRIME + 1];
    for (int64_t j = 0; j < r; j++) rt[j] = twiddle(tw, j * (n / r), forward);   /* the r-th roots */
    for (int64_t p = 0; p < m; p++) {
        for (int64_t j = 1; j < r; j++) w[j] = twiddle(tw, p * j * s, forward);
        for (int64_t q = 0; q < s; q++) {
            for (int64_t k = 0; k < r; k++) a[k] = x[q + s * (p + k * m)];
            for (int64_t j = 0; j < r; j++) {
                cplx acc = a[0];
                for (int64_t k = 1, jk = j; k < r; k++, jk = (jk + j) % r) acc += cmul(a[k], rt[jk]);
                y[q + s * (r * p + j)] = j ? cmul(acc, w[j]) : acc;
            }
        }
    }
}

static void pass(int64_t r, int64_t m, int64_t s, const cplx *x, cplx *y, const cplx *tw, int64_t n, int forward) {
    switch (r) {
    case 2: pass2(m, s, x, y, tw, forward); break;
    case 3: pass3(m, s, x, y, tw, forward); break;
    case 4: pass4(m, s, x, y, tw, forward); break;
    default: pass_any(r, m, s, x, y, tw, n, forward); break;
    }
}

static void run_direct(const tl_fft_plan *p, double _Complex *x, double _Complex *work, int forward) {
    double _Complex *a = x, *b = work;
    int64_t s = 1, len = p->n;
    for (int f = 0; f < p->nfac; f++) {
        const int64_t r = p->fac[f], m = len / r;
        pass(r, m, s, a, b, p->tw, p->n, forward);
        double _Complex *tmp = a;
        a = b;
        b = tmp;
        s *= r;
        len = m;
    }
    if (a != x) memcpy(x, a, (size_t)p->n * sizeof *x);
}

/* X[k] = chirp[k] * sum_j (x[j] chirp[j]) conj(chirp[k - j]) */
static void run_bluestein(const tl_fft_plan *p, double _Complex *x, double _Complex *work, int forward) {
    const int64_t n = p->n, m = p->m;
    double _Complex *a = work, *sub_work = work + m;
    if (!forward)
        for (int64_t k = 0; k < n; k++) x[k] = conj(x[k]);
    for (int64_t k = 0; k < n; k++) a[k] = x[k] * p->chirp[k];
    memset(a + n, 0, (size_t)(m - n) * sizeof *a);
    tl_fft_run(p->sub, a, sub_work, 1);
    for (int64_t k = 0; k < m; k++) a[k] *= p->bft[k];
    tl_fft_run(p->sub, a, sub_work, 0);
    for (int64_t k = 0; k < n; k++) x[k] = a[k] * p->chirp[k];
    if (!forward)
        for (int64_t k = 0; k < n; k++) x[k] = conj(x[k]);
}

void tl_fft_run(const tl_fft_plan *p, double _Complex *x, double _Complex *work, int forward) {
    if (p->n <= 1) return;
    if (p->sub) run_bluestein(p, x, work, forward);
    else run_direct(p, x, work, forward);
}

/* ---------------------------------------------------------------- plans */
static int factorize(int64_t n, int64_t *fac, int *nfac) {
    int k = 0;
    while (n % 4 == 0) { fac[k++] = 4; n /= 4; }
    while (n % 2 == 0) { fac[k++] = 2; n /= 2; }
    for (int64_t f = 3; f * f <= n; f += 2)
        while (n % f == 0) { fac[k++] = f; n /= f; }
    if (n > 1) fac[k++] = n;
    *nfac = k;
    for (int i = 0; i < k; i++)
        if (fac[i] > TL_FFT_MAX_DIRECT_PRIME) return 0;
    return 1;
}

static tl_fft_plan *plan_build(int64_t n) {
    tl_fft_plan *p = calloc(1, sizeof *p);
    if (!p) goto oom;
    p->n = n;
    p->refs = 1;
    if (factorize(n, p->fac, &p->nfac)) {
        p->tw = malloc((size_t)n * sizeof *p->tw);
        if (!p->tw) goto oom;
        for (int64_t k = 0; k < n; k++) {
            const double ang = -2.0 * M_PI * (double)k / (double)n;
            p->tw[k] = cos(ang) + I * sin(ang);
        }
        return p;
    }
    int64_t m = 1;
    while (m < 2 * n - 1) m *= 2;
    p->m = m;
    p->sub = tl_fft_plan_get(m);
    p->chirp = malloc((size_t)n * sizeof *p->chirp);
    p->bft = calloc((size_t)m, sizeof *p->bft);
    double _Complex *work = p->sub ? malloc((size_t)tl_fft_plan_scratch(p->sub) * sizeof *work) : NULL;
    if (!p->sub || !p->chirp || !p->bft || !work) {
        free(work);
        goto oom;
    }
    for (int64_t k = 0; k < n; k++) {
        const int64_t k2 = (int64_t)(((unsigned __int128)k * (unsigned __int128)k) % (unsigned __int128)(2 * n));
        const double ang = -M_PI * (double)k2 / (double)n;
        p->chirp[k] = cos(ang) + I * sin(ang);
    }
    p->bft[0] = conj(p->chirp[0]);
    for (int64_t k = 1; k < n; k++) p->bft[k] = p->bft[m - k] = conj(p->chirp[k]);
    tl_fft_run(p->sub, p->bft, work, 1);
    for (int64_t k = 0; k < m; k++) p->bft[k] /= (double)m;
    free(work);
    return p;
oom:
    plan_free(p);
    tl_set_error(TL_ERR_MEMORY, "fft: not enough memory for a plan of length %lld", (long long)n);
    return NULL;
}

static pthread_mutex_t g_cache_lock = PTHREAD_MUTEX_INITIALIZER;
static tl_fft_plan *g_cache[TL_FFT_CACHE];
static int g_cache_next;

tl_fft_plan *tl_fft_plan_get(int64_t n) {
    pthread_mutex_lock(&g_cache_lock);
    for (int i = 0; i < TL_FFT_CACHE; i++)
        if (g_cache[i] && g_cache[i]->n == n) {
            tl_fft_plan *p = g_cache[i];
            __atomic_add_fetch(&p->refs, 1, __ATOMIC_RELAXED);
            pthread_mutex_unlock(&g_cache_lock);
            return p;
        }
    pthread_mutex_unlock(&g_cache_lock);
    tl_fft_plan *p = plan_build(n);
    if (!p) return NULL;
    __atomic_add_fetch(&p->refs, 1, __ATOMIC_RELAXED);   /* the cache's reference */
    pthread_mutex_lock(&g_cache_lock);
    tl_fft_plan *old = g_cache[g_cache_next];
    g_cache[g_cache_next] = p;
    g_cache_next = (g_cache_next + 1) % TL_FFT_CACHE;
    pthread_mutex_unlock(&g_cache_lock);
    tl_fft_plan_release(old);
    return p;
}
