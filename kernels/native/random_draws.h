/* PyTorch's CPU draws (ATen/core/DistributionsHelper.h and
 * TransformationHelper.h), on torchlet's MT19937 generator: the same bits
 * in, the same arithmetic, so the same numbers out. The caller holds the
 * generator's lock.
 *
 * PyTorch's kernels are compiled per CPU capability; in its AVX2 / AVX-512
 * builds the compiler contracts `x * (to - from) + from` and `val * std +
 * mean` into fused multiply-adds, so these use fma() / fmaf() explicitly
 * (tests/ops/test_random_streams.py compares with torch draw for draw). */
#ifndef TL_RANDOM_DRAWS_H
#define TL_RANDOM_DRAWS_H

#include <math.h>
#include <stdint.h>

#include "tl_runtime.h"
#include "tl_tensor.h"

#define TL_PI 3.14159265358979323846

/* uniform_real_distribution<float>: the low 24 bits of one draw */
static inline float tl_draw_uniform_f32(tl_generator *g, float from, float to) {
    const float x = (float)(tl_generator_random(g) & 0xFFFFFFu) * (1.0f / 16777216.0f);
    return fmaf(x, to - from, from);
}

/* n of the above into out, the engine's words drawn in bulk: from = 0, to = 1
 * skips the fma (fma(x, 1, 0) is x) */
static inline void tl_draw_uniform_f32_n(tl_generator *g, float *out, int64_t n, float from, float to) {
    uint32_t w[512];
    const float span = to - from;
    const int unit = from == 0.0f && to == 1.0f;
    for (int64_t i = 0; i < n; i += 512) {
        const int64_t m = n - i < 512 ? n - i : 512;
        tl_generator_random_fill(g, w, m);
        for (int64_t j = 0; j < m; j++) {
            const float x = (float)(w[j] & 0xFFFFFFu) * (1.0f / 16777216.0f);
            out[i + j] = unit ? x : fmaf(x, span, from);
        }
    }
}

/* uniform_real_distribution<double>: the low 53 bits of random64() */
static inline double tl_draw_uniform_f64(tl_generator *g, double from, double to) {
    const double x = (double)(tl_generator_random64(g) & ((1ull << 53) - 1)) * (1.0 / 9007199254740992.0);
    return fma(x, to - from, from);
}

static inline void tl_draw_uniform_f64_n(tl_generator *g, double *out, int64_t n, double from, double to) {
    uint32_t w[512];
    const double span = to - from;
    const int unit = from == 0.0 && to == 1.0;
    for (int64_t i = 0; i < n; i += 256) {
        const int64_t m = n - i < 256 ? n - i : 256;
        tl_generator_random_fill(g, w, 2 * m);
        for (int64_t j = 0; j < m; j++) {
            const uint64_t r = (uint64_t)w[2 * j] << 32 | w[2 * j + 1];
            const double x = (double)(r & ((1ull << 53) - 1)) * (1.0 / 9007199254740992.0);
            out[i + j] = unit ? x : fma(x, span, from);
        }
    }
}

/* normal_distribution<double>: Box-Muller on two uniforms, the sine sample
 * cached in the generator for the next call */
static inline double tl_draw_normal_f64(tl_generator *g, double mean, double std) {
    double z;
    if (!tl_generator_take_double_normal(g, &z)) {
        const double u1 = tl_draw_uniform_f64(g, 0.0, 1.0), u2 = tl_draw_uniform_f64(g, 0.0, 1.0);
        const double r = sqrt(-2.0 * log1p(-u2));
        const double theta = 2.0 * TL_PI * u1;
        tl_generator_put_double_normal(g, r * sin(theta));
        z = r * cos(theta);
    }
    return fma(z, std, mean);
}

/* NormalFill16 (scalar form): 16 uniforms in data -> 8 Box-Muller pairs */
static inline void tl_normal_fill16_f32_libm(float *data, float mean, float std) {
    for (int j = 0; j < 8; j++) {
        const float u1 = 1 - data[j], u2 = data[j + 8];
        const float radius = sqrtf(-2 * logf(u1));
        const float theta = (float)(2.0 * TL_PI * (double)u2);
        data[j] = fmaf(radius * cosf(theta), std, mean);
        data[j + 8] = fmaf(radius * sinf(theta), std, mean);
    }
}
/* PyTorch's AVX2 / AVX-512 builds run NormalFill16<float> through
 * avx_mathfun.h's log256_ps / sincos256_ps (the cephes single-precision
 * polynomials) instead of libm: the same single-precision operations, one
 * lane at a time (kernels/native/random_cephes.c). */
void tl__cephes_logf_sincosf(const float *u1, const float *theta, float *log_u1, float *sin_t, float *cos_t);

static inline void tl_normal_fill16_f32_cephes(float *data, float mean, float std) {
    float u1[8], th[8], lg[8], sn[8], cs[8];
    for (int j = 0; j < 8; j++) {
        u1[j] = 1.0f - data[j];
        th[j] = (float)(2.0 * TL_PI) * data[j + 8];
    }
    tl__cephes_logf_sincosf(u1, th, lg, sn, cs);
    if (std == 1.0f && mean == 0.0f) {   /* fma(a, 1, 0) is a + 0 (-0 becomes +0) */
        for (int j = 0; j < 8; j++) {
            const float radius = sqrtf(-2.0f * lg[j]);
            data[j] = radius * cs[j] + 0.0f;
            data[j + 8] = radius * sn[j] + 0.0f;
        }
        return;
    }
    for (int j = 0; j < 8; j++) {
        const float radius = sqrtf(-2.0f * lg[j]);
        data[j] = fmaf(radius * cs[j], std, mean);
        data[j + 8] = fmaf(radius * sn[j], std, mean);
    }
}

/* the form PyTorch runs at torchlet's CPU capability */
static inline void tl_normal_fill16_f32(float *data, float mean, float std) {
    if (tl_cpu_capability() >= 1) tl_normal_fill16_f32_cephes(data, mean, std);
    else tl_normal_fill16_f32_libm(data, mean, std);
}

static inline void tl_normal_fill16_f64(double *data, double mean, double std) {
    for (int j = 0; j < 8; j++) {
        const double u1 = 1 - data[j], u2 = data[j + 8];
        const double radius = sqrt(-2 * log(u1));
        const double theta = 2.0 * TL_PI * u2;
        data[j] = fma(radius * cos(theta), std, mean);
        data[j + 8] = fma(radius * sin(theta), std, mean);
    }
}

/* rand / randn / normal(mean, std, size) (factories.c): empty, then
 * uniform_(a, b) or normal_(a, b) */
tl_tensor *tl__random_factory(const int64_t *size, int64_t size_len, tl_generator *gen, tl_dtype dtype, int layout,
                              int device, int normal, double a, double b);

#endif
