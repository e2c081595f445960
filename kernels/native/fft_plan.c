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
static void pass(int64_t r, int64_t m, int64_t s, const double _Complex *x, double _Complex *y,
                 const double _Complex *tw, int64_t n, int forward) {
    double _Complex a[TL_FFT_MAX_DIRECT_PRIME + 1], t[TL_FFT_MAX_DIRECT_PRIME + 1], w[TL_FFT_MAX_DIRECT_PRIME + 1];
    const double _Complex I1 = forward ? -I : I;   /* the 4th root of unity of the direction */
    const double sin60 = 0.86602540378443864676;
    for (int64_t p = 0; p < m; p++) {
        for (int64_t j = 1; j < r; j++) w[j] = forward ? tw[p * j * s] : conj(tw[p * j * s]);
        for (int64_t q = 0; q < s; q++) {
            for (int64_t k = 0; k < r; k++) a[k] = x[q + s * (p + k * m)];
            if (r == 2) {
                t[0] = a[0] + a[1];
                t[1] = a[0] - a[1];
            } else if (r == 4) {
                const double _Complex s02 = a[0] + a[2], d02 = a[0] - a[2], s13 = a[1] + a[3], d13 = a[1] - a[3];
                t[0] = s02 + s13;
                t[2] = s02 - s13;
                t[1] = d02 + I1 * d13;
                t[3] = d02 - I1 * d13;
            } else if (r == 3) {
                const double _Complex sum = a[1] + a[2], dif = a[1] - a[2];
                const double _Complex m1 = a[0] - 0.5 * sum, m2 = I1 * sin60 * dif;
                t[0] = a[0] + sum;
                t[1] = m1 + m2;
                t[2] = m1 - m2;
            } else {
                const int64_t step = n / r;
                for (int64_t j = 0; j < r; j++) {
                    double _Complex acc = a[0];
                    for (int64_t k = 1; k < r; k++) {
                        const double _Complex wk = tw[((j * k) % r) * step];
                        acc += a[k] * (forward ? wk : conj(wk));
                    }
                    t[j] = acc;
                }
            }
            y[q + s * (r * p)] = t[0];
            for (int64_t j = 1; j < r; j++) y[q + s * (r * p + j)] = t[j] * w[j];
        }
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
