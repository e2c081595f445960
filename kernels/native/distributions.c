/* The in-place random distributions: uniform_, normal_, cauchy_,
 * exponential_, geometric_, log_normal_, bernoulli_, random_ (Tensor
 * methods, PyTorch's schemas, checks and messages), and the factories
 * built on them.
 *
 * Each is PyTorch's CPU kernel: one draw per element through PyTorch's
 * transformation (random_draws.h), in the order PyTorch's serial
 * TensorIterator visits the elements (memory order), so a generator seeded
 * like PyTorch's gives PyTorch's numbers; normal_ of 16 or more contiguous
 * elements is PyTorch's normal_fill (16 uniforms, then 8 Box-Muller pairs,
 * the tail's last 16 drawn again). Values are computed in PyTorch's opmath
 * type and rounded once to self's dtype (a double through float first, as
 * C++'s static_cast<Half>(double) does). */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#include "complex_ops.h"
#include "random_draws.h"
#include "tl_error.h"
#include "tl_half.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/add.h"
#include "ops/bernoulli.h"
#include "ops/cauchy.h"
#include "ops/empty_like.h"
#include "ops/expand.h"
#include "ops/exponential.h"
#include "ops/geometric.h"
#include "ops/log_normal.h"
#include "ops/mul.h"
#include "ops/multinomial.h"
#include "ops/normal.h"
#include "ops/permute.h"
#include "ops/rand_like.h"
#include "ops/randint.h"
#include "ops/randint_like.h"
#include "ops/randn_like.h"
#include "ops/random.h"
#include "ops/uniform.h"
#include "tl_runtime.h"
#include "tl_structured.h"
#include "tl_tensor.h"

typedef enum { D_UNIFORM, D_NORMAL, D_LOG_NORMAL, D_CAUCHY, D_EXPONENTIAL, D_GEOMETRIC, D_BERNOULLI } dist_kind;

/* one draw, in the opmath type of PyTorch's kernel for dt (returned as double) */
static double draw_one(tl_generator *g, dist_kind k, tl_dtype dt, double a, double b) {
    switch (k) {
    case D_UNIFORM:
        return dt == TL_FLOAT64 ? tl_draw_uniform_f64(g, a, b) : (double)tl_draw_uniform_f32(g, (float)a, (float)b);
    case D_NORMAL: return tl_draw_normal_f64(g, a, b);
    case D_LOG_NORMAL: return exp(tl_draw_normal_f64(g, a, b));
    case D_CAUCHY: return fma(b, tan(TL_PI * (tl_draw_uniform_f64(g, 0, 1) - 0.5)), a);
    case D_EXPONENTIAL: return -1.0 / a * log1p(-tl_draw_uniform_f64(g, 0, 1));
    case D_GEOMETRIC: return ceil(log(tl_draw_uniform_f64(g, 0, 1)) / log1p(-a));
    case D_BERNOULLI: return tl_draw_uniform_f64(g, 0, 1) < a ? 1.0 : 0.0;
    }
    return 0;
}

/* v rounded to dt and stored at element i of p (C++'s static_cast<scalar_t>) */
static void store_as(tl_dtype dt, void *p, int64_t i, double v) {
    switch (dt) {
    case TL_FLOAT64: ((double *)p)[i] = v; break;
    case TL_FLOAT32: ((float *)p)[i] = (float)v; break;
    case TL_FLOAT16: ((uint16_t *)p)[i] = tl_f32_to_f16((float)v); break;
    case TL_BFLOAT16: ((uint16_t *)p)[i] = tl_f32_to_bf16((float)v); break;
    case TL_INT64: ((int64_t *)p)[i] = (int64_t)v; break;
    case TL_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
    case TL_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
    case TL_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
    case TL_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case TL_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    default: break;
    }
}

/* v as dt would hold it (for uniform_'s upper-bound check) */
static double rounded(tl_dtype dt, double v) {
    switch (dt) {
    case TL_FLOAT32: return (float)v;
    case TL_FLOAT16: return tl_f16_to_f32(tl_f32_to_f16((float)v));
    case TL_BFLOAT16: return tl_bf16_to_f32(tl_f32_to_bf16((float)v));
    default: return v;
    }
}

/* self's dims ordered as PyTorch's TensorIterator walks a lone output:
 * the largest stride outermost (stable for equal strides) */
static tl_tensor *memory_order_view(tl_tensor *t) {
    const int64_t nd = tl_tensor_ndim(t), *st = tl_tensor_strides(t);
    int64_t perm[TL_MAX_DIMS];
    for (int64_t i = 0; i < nd; i++) {
        int64_t j = i;
        for (; j > 0 && st[perm[j - 1]] < st[i]; j--) perm[j] = perm[j - 1];
        perm[j] = i;
    }
    return tl_ops_permute(t, perm, nd);
}

/* PyTorch's cpu_serial_kernel: self's elements in memory order, each one
 * draw; a non-dense order is filled through a contiguous buffer */
typedef void (*fill_fn)(tl_generator *g, tl_dtype dt, void *p, int64_t n, const void *ctx);

static tl_tensor *serial_fill(tl_tensor *self, tl_generator *gen, fill_fn fill, const void *ctx) {
    if (tl_tensor_device(self) == TL_META || tl_tensor_numel(self) == 0) {
        tl_tensor_retain(self);
        return self;
    }
    tl_generator *g = gen ? gen : tl_default_generator();
    const tl_dtype dt = tl_tensor_dtype(self);
    tl_tensor *v = memory_order_view(self);
    if (!v) return NULL;
    tl_tensor *buf = v;
    if (!tl_tensor_is_contiguous(v)) buf = tl_empty(tl_tensor_ndim(v), tl_tensor_sizes(v), dt, TL_CPU);
    int rc = buf ? 0 : -1;
    if (rc == 0) {
        tl_generator_lock(g);
        fill(g, dt, tl_tensor_data_ptr(buf), tl_tensor_numel(buf), ctx);
        tl_generator_unlock(g);
        if (buf != v) rc = tl_copy_(v, buf); /* bumps self's version */
        else tl_tensor_bump_version(self);
    }
    if (buf != v) tl_tensor_release(buf);
    tl_tensor_release(v);
    if (rc != 0) return NULL;
    tl_tensor_retain(self);
    return self;
}

typedef struct {
    dist_kind kind;
    double a, b;
} dist_args;

static void fill_dist(tl_generator *g, tl_dtype dt, void *p, int64_t n, const void *ctx) {
    const dist_args *d = ctx;
    const dist_kind k = d->kind;
    const double args[3] = {0, d->a, d->b};
    if (k == D_UNIFORM && (dt == TL_FLOAT32 || dt == TL_FLOAT64)) { /* in bulk; `to` (rounded up) becomes `from` */
        if (dt == TL_FLOAT32) {
            float *f = p;
            const float from = (float)d->a, to = (float)d->b;
            tl_draw_uniform_f32_n(g, f, n, from, to);
            for (int64_t i = 0; i < n; i++) f[i] = f[i] == to ? from : f[i];
        } else {
            double *f = p;
            tl_draw_uniform_f64_n(g, f, n, d->a, d->b);
            for (int64_t i = 0; i < n; i++) f[i] = f[i] == d->b ? d->a : f[i];
        }
        return;
    }
    if (k == D_UNIFORM) { /* PyTorch's guard: a value rounded up to `to` becomes `from` */
        const double to = rounded(dt, args[2]), from = rounded(dt, args[1]);
        for (int64_t i = 0; i < n; i++) {
            const double v = rounded(dt, draw_one(g, k, dt, args[1], args[2]));
            store_as(dt, p, i, v == to ? from : v);
        }
        return;
    }
    for (int64_t i = 0; i < n; i++) store_as(dt, p, i, draw_one(g, k, dt, args[1], args[2]));
}

static tl_tensor *fill_with(tl_tensor *self, tl_generator *gen, dist_kind k, double a, double b) {
    const dist_args d = {k, a, b};
    return serial_fill(self, gen, fill_dist, &d);
}

/* C's name of the floating type PyTorch prints in some messages */
static const char *c_type_name(tl_dtype dt) {
    switch (dt) {
    case TL_FLOAT64: return "double";
    case TL_FLOAT16: return "c10::Half";
    case TL_BFLOAT16: return "c10::BFloat16";
    default: return "float";
    }
}
static double dtype_max(tl_dtype dt) {
    switch (dt) {
    case TL_FLOAT64: return DBL_MAX;
    case TL_FLOAT16: return 65504.0;
    case TL_BFLOAT16: return 3.38953138925153547590470800371487867e38;
    default: return FLT_MAX;
    }
}

static int require_floating(tl_tensor *self, const char *kernel) {
    const tl_dtype dt = tl_tensor_dtype(self);
    if (tl_dtype_is_floating(dt)) return 0;
    return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", kernel, tl_dtype_scalar_name(dt));
}

/* PyTorch's normal_fill for n >= 16 contiguous elements: n uniforms in the
 * opmath type, Box-Muller on each block of 16, the last 16 drawn again when
 * n is not a multiple of 16 (half / bfloat16 through a float buffer) */
static void normal_fill16(tl_generator *g, tl_dtype dt, void *p, int64_t n, const void *ctx) {
    const double *args = ctx;
    if (dt == TL_FLOAT64) {
        double *d = p;
        tl_draw_uniform_f64_n(g, d, n, 0, 1);
        for (int64_t i = 0; i < n - 15; i += 16) tl_normal_fill16_f64(d + i, args[0], args[1]);
        if (n % 16) {
            for (int j = 0; j < 16; j++) d[n - 16 + j] = tl_draw_uniform_f64(g, 0, 1);
            tl_normal_fill16_f64(d + n - 16, args[0], args[1]);
        }
        return;
    }
    const float mean = (float)args[0], std = (float)args[1];
    if (dt == TL_FLOAT32) {
        float *f = p;
        tl_draw_uniform_f32_n(g, f, n, 0, 1);
        for (int64_t i = 0; i < n - 15; i += 16) tl_normal_fill16_f32(f + i, mean, std);
        if (n % 16) {
            for (int j = 0; j < 16; j++) f[n - 16 + j] = tl_draw_uniform_f32(g, 0, 1);
            tl_normal_fill16_f32(f + n - 16, mean, std);
        }
        return;
    }
    float buf[16];
    for (int64_t i = 0; i < n - 15; i += 16) {
        for (int j = 0; j < 16; j++) buf[j] = tl_draw_uniform_f32(g, 0, 1);
        tl_normal_fill16_f32(buf, mean, std);
        for (int j = 0; j < 16; j++) store_as(dt, p, i + j, buf[j]);
    }
    if (n % 16) {
        for (int j = 0; j < 16; j++) buf[j] = tl_draw_uniform_f32(g, 0, 1);
        tl_normal_fill16_f32(buf, mean, std);
        for (int j = 0; j < 16; j++) store_as(dt, p, n - 16 + j, buf[j]);
    }
}

/* a complex self filled through its real view (view_as_real), as PyTorch's
 * uniform_ / normal_ do */
typedef tl_tensor *(*real_fill_fn)(tl_keyset, tl_tensor *, double, double, tl_generator *);
static tl_tensor *on_real_view(tl_tensor *self, tl_generator *gen, double a, double b, real_fill_fn f) {
    tl_tensor *re = tl__complex_as_real(self);
    tl_tensor *r = re ? f(0, re, a, b, gen) : NULL;
    tl_tensor_release(re);
    if (!r) return NULL;
    tl_tensor_release(r);
    tl_tensor_retain(self);
    return self;
}

/* PyTorch's check_uniform_bounds */
tl_tensor *tl_native_uniform_(tl_keyset ks, tl_tensor *self, double from, double to, tl_generator *generator) {
    (void)ks;
    if (tl_dtype_is_complex(tl_tensor_dtype(self))) return on_real_view(self, generator, from, to, tl_native_uniform_);
    if (require_floating(self, "check_uniform_bounds")) return NULL;
    const tl_dtype dt = tl_tensor_dtype(self);
    const double max = dtype_max(dt);
    if (!(from >= -max && from <= max))
        return tl_set_error(TL_ERR_RUNTIME, "from is out of bounds for %s", c_type_name(dt)), NULL;
    if (!(to >= -max && to <= max))
        return tl_set_error(TL_ERR_RUNTIME, "to is out of bounds for %s", c_type_name(dt)), NULL;
    if (from > to)
        return tl_set_error(TL_ERR_RUNTIME, "uniform_ expects to return a [from, to) range, but found from=%g > to=%g",
                            from, to), NULL;
    if (to - from > max)
        return tl_set_error(TL_ERR_RUNTIME, "uniform_ expects to-from <= std::numeric_limits<%s>::max(), but found "
                            "to=%g and from=%g which result in to-from to exceed the limit",
                            tl_dtype_scalar_name(dt), to, from), NULL;
    return fill_with(self, generator, D_UNIFORM, from, to);
}

tl_tensor *tl_native_normal_(tl_keyset ks, tl_tensor *self, double mean, double std, tl_generator *generator) {
    (void)ks;
    if (!(std >= 0.0))
        return tl_set_error(TL_ERR_RUNTIME, "normal expects std >= 0.0, but found std %g", std), NULL;
    if (tl_dtype_is_complex(tl_tensor_dtype(self))) /* PyTorch: the real view, std / sqrt(2) */
        return on_real_view(self, generator, mean, std / sqrt(2.0), tl_native_normal_);
    if (require_floating(self, "normal_kernel_cpu")) return NULL;
    if (tl_tensor_numel(self) >= 16 && tl_tensor_is_contiguous(self)) {
        const double args[2] = {mean, std};
        return serial_fill(self, generator, normal_fill16, args);
    }
    return fill_with(self, generator, D_NORMAL, mean, std);
}

tl_tensor *tl_native_log_normal_(tl_keyset ks, tl_tensor *self, double mean, double std, tl_generator *generator) {
    (void)ks;
    if (!(std > 0.0))
        return tl_set_error(TL_ERR_RUNTIME, "log_normal_ expects std > 0.0, but found std=%g", std), NULL;
    if (require_floating(self, "log_normal_cpu")) return NULL;
    return fill_with(self, generator, D_LOG_NORMAL, mean, std);
}

tl_tensor *tl_native_cauchy_(tl_keyset ks, tl_tensor *self, double median, double sigma, tl_generator *generator) {
    (void)ks;
    if (!(sigma > 0.0))
        return tl_set_error(TL_ERR_RUNTIME, "cauchy_ expects sigma > 0.0, but found sigma=%g", sigma), NULL;
    const tl_dtype dt = tl_tensor_dtype(self);
    if (!tl_dtype_is_floating(dt))   /* PyTorch prints C's type name here */
        return tl_set_error(TL_ERR_RUNTIME, "Cauchy distribution is a continuous probability distribution. dtype "
                            "must be a floating point but you specified %s",
                            dt == TL_INT64 ? "long int" : dt == TL_INT32 ? "int" : dt == TL_INT16 ? "short int"
                            : dt == TL_INT8 ? "signed char" : dt == TL_UINT8 ? "unsigned char" : "bool"), NULL;
    return fill_with(self, generator, D_CAUCHY, median, sigma);
}

tl_tensor *tl_native_exponential_(tl_keyset ks, tl_tensor *self, double lambd, tl_generator *generator) {
    (void)ks;
    if (!(lambd > 0.0))
        return tl_set_error(TL_ERR_RUNTIME, "exponential_ expects lambda > 0.0, but found lambda=%g", lambd), NULL;
    const tl_dtype dt = tl_tensor_dtype(self);
    if (!tl_dtype_is_floating(dt))
        return tl_set_error(TL_ERR_RUNTIME, "Exponential distribution is a continuous probability distribution. "
                            "dtype must be a floating point but you specified %s", tl_dtype_scalar_name(dt)), NULL;
    return fill_with(self, generator, D_EXPONENTIAL, lambd, 0);
}

/* every dtype (integers and bool too, as PyTorch) */
tl_tensor *tl_native_geometric_(tl_keyset ks, tl_tensor *self, double p, tl_generator *generator) {
    (void)ks;
    if (!(p > 0 && p < 1))
        return tl_set_error(TL_ERR_RUNTIME, "geometric_ expects p to be in (0, 1), but got p=%g", p), NULL;
    return fill_with(self, generator, D_GEOMETRIC, p, 0);
}

/* bernoulli_(p): 1 where u < p, for every dtype (bool and integers too) */

tl_tensor *tl_native_bernoulli__float(tl_keyset ks, tl_tensor *self, double p, tl_generator *generator) {
    (void)ks;
    if (!(p >= 0 && p <= 1))
        return tl_set_error(TL_ERR_RUNTIME, "bernoulli_ expects p to be in [0, 1], but got p=%g", p), NULL;
    return fill_with(self, generator, D_BERNOULLI, p, 0);
}

/* bernoulli_(p tensor): self <- draws of p broadcast to self's shape (p floating) */
tl_tensor *tl_native_bernoulli__Tensor(tl_keyset ks, tl_tensor *self, tl_tensor *p, tl_generator *generator) {
    (void)ks;
    tl_tensor *pe = tl_ops_expand(p, tl_tensor_sizes(self), tl_tensor_ndim(self), false);
    if (!pe) return NULL;
    if (tl_tensor_device(self) == TL_META || tl_tensor_numel(self) == 0) {
        tl_tensor_release(pe);
        tl_tensor_retain(self);
        return self;
    }
    tl_tensor *draws = tl_ops_bernoulli(pe, generator);
    const int rc = draws ? tl_copy_(self, draws) : -1;
    tl_tensor_release(draws);
    tl_tensor_release(pe);
    if (rc != 0) return NULL;
    tl_tensor_retain(self);
    return self;
}

/* bernoulli(self, p): a new tensor like self */
tl_tensor *tl_native_bernoulli_p(tl_keyset ks, tl_tensor *self, double p, tl_generator *generator) {
    (void)ks;
    tl_tensor *r = tl_ops_empty_like(self, TL_DTYPE_UNDEFINED, -1, -1, false, false, -1);
    tl_tensor *f = r ? tl_ops_bernoulli__float(r, p, generator) : NULL;
    tl_tensor_release(r);
    return f;
}

/* bernoulli(self): self holds the probabilities (floating, in [0, 1]) */
tl_tensor *tl_native_bernoulli(tl_keyset ks, tl_tensor *self, tl_generator *generator) {
    (void)ks;
    if (require_floating(self, "bernoulli_tensor_cpu_p_")) return NULL;
    tl_tensor *r = tl_ops_empty_like(self, TL_DTYPE_UNDEFINED, -1, -1, false, false, -1);
    if (!r || tl_tensor_device(self) == TL_META || tl_tensor_numel(self) == 0) return r;
    tl_generator *g = generator ? generator : tl_default_generator();
    tl_tensor *p = tl_empty(tl_tensor_ndim(self), tl_tensor_sizes(self), TL_FLOAT64, TL_CPU);
    int rc = p ? tl_copy_(p, self) : -1;
    if (rc == 0) {
        double *v = tl_tensor_data_ptr(p);
        const int64_t n = tl_tensor_numel(p);
        for (int64_t i = 0; i < n && rc == 0; i++)
            if (!(v[i] >= 0 && v[i] <= 1))
                rc = tl_set_error(TL_ERR_RUNTIME, "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  "
                                  "(Could this error message be improved?  If so, please report an enhancement "
                                  "request to PyTorch.)");
        /* bernoulli_distribution<double> for double p (53-bit uniforms), <float> otherwise (24-bit) */
        const bool dbl = tl_tensor_dtype(self) == TL_FLOAT64;
        tl_generator_lock(g);
        for (int64_t i = 0; i < n && rc == 0; i++)
            v[i] = (dbl ? tl_draw_uniform_f64(g, 0, 1) < v[i] : tl_draw_uniform_f32(g, 0, 1) < (float)v[i]) ? 1.0 : 0.0;
        tl_generator_unlock(g);
        if (rc == 0) rc = tl_copy_(r, p);
    }
    tl_tensor_release(p);
    if (rc != 0) {
        tl_tensor_release(r);
        return NULL;
    }
    return r;
}

/* rand_like / randn_like: empty_like, then uniform_(0, 1) / normal_(0, 1) */
static tl_tensor *random_like(tl_tensor *self, tl_generator *generator, tl_dtype dtype, int layout, int device,
                              int memory_format, int normal) {
    tl_tensor *r = tl_ops_empty_like(self, dtype, layout, device, false, false, memory_format);
    tl_tensor *f = !r ? NULL : normal ? tl_ops_normal_(r, 0, 1, generator) : tl_ops_uniform_(r, 0, 1, generator);
    tl_tensor_release(r);
    return f;
}
tl_tensor *tl_native_rand_like(tl_keyset ks, tl_tensor *self, tl_dtype dtype, int layout, int device,
                               bool pin_memory, bool pin_memory_has, int memory_format) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    return random_like(self, NULL, dtype, layout, device, memory_format, 0);
}
tl_tensor *tl_native_rand_like_generator(tl_keyset ks, tl_tensor *self, tl_generator *generator, tl_dtype dtype,
                                         int layout, int device, bool pin_memory, bool pin_memory_has,
                                         int memory_format) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    return random_like(self, generator, dtype, layout, device, memory_format, 0);
}
tl_tensor *tl_native_randn_like(tl_keyset ks, tl_tensor *self, tl_dtype dtype, int layout, int device,
                                bool pin_memory, bool pin_memory_has, int memory_format) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    return random_like(self, NULL, dtype, layout, device, memory_format, 1);
}
tl_tensor *tl_native_randn_like_generator(tl_keyset ks, tl_tensor *self, tl_generator *generator, tl_dtype dtype,
                                          int layout, int device, bool pin_memory, bool pin_memory_has,
                                          int memory_format) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    return random_like(self, generator, dtype, layout, device, memory_format, 1);
}

/* ------------------------------------------------------------ normal(mean, std)
 * PyTorch's normal_out_impl: out.normal_(0, std) then += mean (a mean
 * tensor, a number std); out.normal_(0, 1) then *= std, += mean (a std
 * tensor; a number mean as a 0-dim tensor of out's dtype) */
static int in_place(tl_tensor *r) {
    if (!r) return -1;
    tl_tensor_release(r);
    return 0;
}

static int normal_fill(tl_tensor *out, tl_tensor *mean_t, double mean, tl_tensor *std_t, double std,
                       tl_generator *gen) {
    if (tl_tensor_device(out) == TL_META) return 0;
    if (!std_t && !mean_t) return in_place(tl_native_normal_(0, out, mean, std, gen));   /* normal(float, float, size, out=) */
    if (!std_t)
        return in_place(tl_native_normal_(0, out, 0, std, gen)) ||
               in_place(tl_ops_add__Tensor(out, mean_t, tl_scalar_from_int(1)));
    if (in_place(tl_native_normal_(0, out, 0, 1, gen)) || in_place(tl_ops_mul__Tensor(out, std_t))) return -1;
    if (mean_t) return in_place(tl_ops_add__Tensor(out, mean_t, tl_scalar_from_int(1)));
    tl_tensor *m = tl_empty(0, NULL, tl_tensor_dtype(out), TL_CPU);
    int rc = m ? tl_fill_(m, tl_scalar_from_double(mean)) : -1;
    if (rc == 0) rc = in_place(tl_ops_add__Tensor(out, m, tl_scalar_from_int(1)));
    tl_tensor_release(m);
    return rc;
}

static int check_std_number(double std) {
    if (std >= 0.0) return 0;
    return tl_set_error(TL_ERR_RUNTIME, "normal expects std >= 0.0, but found std %g", std);
}
/* every element of std >= 0 (NaN fails, as PyTorch's std.min() >= 0) */
static int check_std_tensor(tl_tensor *std) {
    const int64_t n = tl_tensor_numel(std);
    if (n == 0 || tl_tensor_device(std) == TL_META) return 0;
    tl_tensor *c = tl_empty(tl_tensor_ndim(std), tl_tensor_sizes(std), TL_FLOAT64, TL_CPU);
    int rc = c ? tl_copy_(c, std) : -1;
    if (rc == 0) {
        const double *v = tl_tensor_data_ptr(c);
        for (int64_t i = 0; i < n && rc == 0; i++)
            if (!(v[i] >= 0.0)) rc = tl_set_error(TL_ERR_RUNTIME, "normal expects all elements of std >= 0.0");
    }
    tl_tensor_release(c);
    return rc;
}

/* the broadcast shape of a and b into sizes (PyTorch's infer_size message) */
static int broadcast_shape(tl_tensor *a, tl_tensor *b, int64_t *sizes, int64_t *nd) {
    const int64_t na = tl_tensor_ndim(a), nb = tl_tensor_ndim(b), n = na > nb ? na : nb;
    if (n > 64) return tl_set_error(TL_ERR_RUNTIME, "too many dimensions");
    for (int64_t i = n - 1; i >= 0; i--) {
        const int64_t ia = i - (n - na), ib = i - (n - nb);
        const int64_t sa = ia >= 0 ? tl_tensor_size(a, ia) : 1, sb = ib >= 0 ? tl_tensor_size(b, ib) : 1;
        if (sa != sb && sa != 1 && sb != 1)
            return tl_set_error(TL_ERR_RUNTIME, "The size of tensor a (%lld) must match the size of tensor b (%lld) "
                                "at non-singleton dimension %lld", (long long)sa, (long long)sb, (long long)i);
        sizes[i] = sa == 1 ? sb : sa;
    }
    *nd = n;
    return 0;
}

/* out (already of the result's shape) filled, or NULL */
static tl_tensor *normal_result(tl_tensor *out, tl_tensor *mean_t, double mean, tl_tensor *std_t, double std,
                                tl_generator *gen) {
    if (!out) return NULL;
    if (require_floating(out, "normal_kernel_cpu") || normal_fill(out, mean_t, mean, std_t, std, gen)) {
        tl_tensor_release(out);
        return NULL;
    }
    return out;
}
static tl_tensor *normal_out_result(tl_tensor *out, int64_t nd, const int64_t *sizes, tl_tensor *mean_t, double mean,
                                    tl_tensor *std_t, double std, tl_generator *gen) {
    if (tl_structured_resize_out(out, nd, sizes, TL_DTYPE_UNDEFINED)) return NULL;
    if (require_floating(out, "normal_kernel_cpu") || normal_fill(out, mean_t, mean, std_t, std, gen)) return NULL;
    tl_tensor_retain(out);
    return out;
}

tl_tensor *tl_native_normal_Tensor_float(tl_keyset ks, tl_tensor *mean, double std, tl_generator *generator) {
    (void)ks;
    if (check_std_number(std)) return NULL;
    tl_tensor *out = tl_empty(tl_tensor_ndim(mean), tl_tensor_sizes(mean), tl_tensor_dtype(mean), tl__device_of(mean));
    return normal_result(out, mean, 0, NULL, std, generator);
}
tl_tensor *tl_native_normal_float_Tensor(tl_keyset ks, double mean, tl_tensor *std, tl_generator *generator) {
    (void)ks;
    if (check_std_tensor(std)) return NULL;
    tl_tensor *out = tl_empty(tl_tensor_ndim(std), tl_tensor_sizes(std), tl_tensor_dtype(std), tl__device_of(std));
    return normal_result(out, NULL, mean, std, 0, generator);
}
tl_tensor *tl_native_normal_Tensor_Tensor(tl_keyset ks, tl_tensor *mean, tl_tensor *std, tl_generator *generator) {
    (void)ks;
    int64_t sizes[64], nd;
    if (check_std_tensor(std) || broadcast_shape(mean, std, sizes, &nd)) return NULL;
    tl_tensor *out = tl_empty(nd, sizes, tl_tensor_dtype(mean), tl__device_of(mean));
    return normal_result(out, mean, 0, std, 0, generator);
}
tl_tensor *tl_native_normal_Tensor_float_out(tl_keyset ks, tl_tensor *mean, double std, tl_generator *generator,
                                             tl_tensor *out) {
    (void)ks;
    if (check_std_number(std)) return NULL;
    return normal_out_result(out, tl_tensor_ndim(mean), tl_tensor_sizes(mean), mean, 0, NULL, std, generator);
}
tl_tensor *tl_native_normal_float_Tensor_out(tl_keyset ks, double mean, tl_tensor *std, tl_generator *generator,
                                             tl_tensor *out) {
    (void)ks;
    if (check_std_tensor(std)) return NULL;
    return normal_out_result(out, tl_tensor_ndim(std), tl_tensor_sizes(std), NULL, mean, std, 0, generator);
}
tl_tensor *tl_native_normal_Tensor_Tensor_out(tl_keyset ks, tl_tensor *mean, tl_tensor *std, tl_generator *generator,
                                              tl_tensor *out) {
    (void)ks;
    int64_t sizes[64], nd;
    if (check_std_tensor(std) || broadcast_shape(mean, std, sizes, &nd)) return NULL;
    return normal_out_result(out, nd, sizes, mean, 0, std, 0, generator);
}
/* normal(mean, std, size): randn's factory (dtype, device, layout), then normal_ */
tl_tensor *tl_native_normal_float_float(tl_keyset ks, double mean, double std, const int64_t *size, int64_t size_len,
                                        tl_generator *generator, tl_dtype dtype, int layout, int device,
                                        bool pin_memory, bool pin_memory_has) {
    (void)ks;
    if (check_std_number(std)) return NULL;
    (void)pin_memory, (void)pin_memory_has;
    return tl__random_factory(size, size_len, generator, dtype, layout, device, 1, mean, std);
}
tl_tensor *tl_native_normal_float_float_out(tl_keyset ks, double mean, double std, const int64_t *size,
                                            int64_t size_len, tl_generator *generator, tl_tensor *out) {
    (void)ks;
    if (check_std_number(std)) return NULL;
    return normal_out_result(out, size_len, size, NULL, mean, NULL, std, generator);
}

/* randint_like: empty_like(self), then integers uniform in [low, high) from
 * randint's sampler (int64), converted to the result dtype */
static tl_tensor *randint_like_impl(tl_tensor *self, int64_t low, int64_t high, tl_generator *generator,
                                    tl_dtype dtype, int layout, int device, int memory_format) {
    tl_tensor *r = tl_ops_empty_like(self, dtype, layout, device, false, false, memory_format);
    if (!r) return NULL;
    tl_tensor *v = tl_ops_randint_low_generator(low, high, tl_tensor_sizes(r), tl_tensor_ndim(r), generator, TL_INT64,
                                                -1, tl_tensor_device(r) == TL_META ? (int)TL_META : -1, false, false);
    if (!v || (tl_tensor_device(r) != TL_META && tl_copy_(r, v))) {
        tl_tensor_release(v);
        tl_tensor_release(r);
        return NULL;
    }
    tl_tensor_release(v);
    return r;
}
tl_tensor *tl_native_randint_like(tl_keyset ks, tl_tensor *self, int64_t high, tl_dtype dtype, int layout,
                                  int device, bool pin_memory, bool pin_memory_has, int memory_format) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    return randint_like_impl(self, 0, high, NULL, dtype, layout, device, memory_format);
}
tl_tensor *tl_native_randint_like_generator(tl_keyset ks, tl_tensor *self, int64_t high, tl_generator *generator,
                                            tl_dtype dtype, int layout, int device, bool pin_memory,
                                            bool pin_memory_has, int memory_format) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    return randint_like_impl(self, 0, high, generator, dtype, layout, device, memory_format);
}
tl_tensor *tl_native_randint_like_low_dtype(tl_keyset ks, tl_tensor *self, int64_t low, int64_t high, tl_dtype dtype,
                                            int layout, int device, bool pin_memory, bool pin_memory_has,
                                            int memory_format) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    return randint_like_impl(self, low, high, NULL, dtype, layout, device, memory_format);
}
tl_tensor *tl_native_randint_like_low_generator_dtype(tl_keyset ks, tl_tensor *self, int64_t low, int64_t high,
                                                      tl_generator *generator, tl_dtype dtype, int layout, int device,
                                                      bool pin_memory, bool pin_memory_has, int memory_format) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    return randint_like_impl(self, low, high, generator, dtype, layout, device, memory_format);
}

/* ------------------------------------------------------------ multinomial
 * rows of self are (unnormalized) category weights; with replacement each
 * sample inverts the row's cumulative sum at u * total, without replacement
 * the categories with the num_samples smallest keys E / w (E exponential)
 * are taken in key order: the order in which draws without replacement
 * would pick them (zero weights last). */
static int multinomial_check(tl_tensor *self, int64_t n_sample, bool replacement) {
    const tl_dtype dt = tl_tensor_dtype(self);
    if (!tl_dtype_is_floating(dt))
        return tl_set_error(TL_ERR_RUNTIME, "multinomial only supports floating-point dtypes for input, got: %s",
                            tl_dtype_scalar_name(dt));
    const int64_t nd = tl_tensor_ndim(self);
    if (nd < 1 || nd > 2) return tl_set_error(TL_ERR_RUNTIME, "prob_dist must be 1 or 2 dim");
    if (n_sample <= 0) return tl_set_error(TL_ERR_RUNTIME, "cannot sample n_sample <= 0 samples");
    if (!replacement && n_sample > tl_tensor_size(self, nd - 1))
        return tl_set_error(TL_ERR_RUNTIME, "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
    return 0;
}

static int multinomial_fill(tl_tensor *self, int64_t n_sample, bool replacement, tl_generator *gen, tl_tensor *out) {
    const int64_t nd = tl_tensor_ndim(self), k = tl_tensor_size(self, nd - 1);
    const int64_t rows = nd == 2 ? tl_tensor_size(self, 0) : 1;
    if (tl_tensor_device(out) == TL_META || rows == 0) return 0;
    tl_generator *g = gen ? gen : tl_default_generator();
    tl_tensor *w = tl_empty(nd, tl_tensor_sizes(self), TL_FLOAT64, TL_CPU);
    tl_tensor *res = tl_empty(tl_tensor_ndim(out), tl_tensor_sizes(out), TL_INT64, TL_CPU);
    double *key = (double *)malloc((size_t)(k > 0 ? k : 1) * sizeof(double));
    int rc = w && res && key ? tl_copy_(w, self) : -1;
    if (rc == 0) {
        const double *wv = tl_tensor_data_ptr(w);
        int64_t *ov = tl_tensor_data_ptr(res);
        for (int64_t r = 0; r < rows && rc == 0; r++) {
            const double *row = wv + r * k;
            double total = 0;
            for (int64_t j = 0; j < k; j++) {
                if (!(row[j] >= 0) || row[j] == INFINITY) {
                    rc = tl_set_error(TL_ERR_RUNTIME, "probability tensor contains either `inf`, `nan` or element < 0");
                    break;
                }
                total += row[j];
            }
            if (rc == 0 && !(total > 0))
                rc = tl_set_error(TL_ERR_RUNTIME, "invalid multinomial distribution (sum of probabilities <= 0)");
            if (rc != 0) break;
            int64_t *orow = ov + r * n_sample;
            if (replacement) {
                for (int64_t s = 0; s < n_sample; s++) {
                    tl_generator_lock(g);
                    const double t = tl_draw_uniform_f64(g, 0, 1) * total;
                    tl_generator_unlock(g);
                    double c = 0;
                    int64_t j = 0, last = 0;
                    for (; j < k; j++) {
                        if (row[j] > 0) last = j;
                        c += row[j];
                        if (t < c && row[j] > 0) break;
                    }
                    orow[s] = j < k ? j : last;   /* rounding at the top end: the last positive weight */
                }
            } else {
                tl_generator_lock(g);
                for (int64_t j = 0; j < k; j++)
                    key[j] = row[j] > 0 ? -log1p(-tl_draw_uniform_f64(g, 0, 1)) / row[j] : INFINITY;
                tl_generator_unlock(g);
                for (int64_t s = 0; s < n_sample; s++) {   /* selection of the n smallest keys, in order */
                    int64_t best = -1;
                    for (int64_t j = 0; j < k; j++)
                        if (!isnan(key[j]) && (best < 0 || key[j] < key[best])) best = j;
                    orow[s] = best;
                    key[best] = NAN;   /* taken */
                }
            }
        }
        if (rc == 0) rc = tl_copy_(out, res);
    }
    free(key);
    tl_tensor_release(w);
    tl_tensor_release(res);
    return rc;
}

static void multinomial_shape(tl_tensor *self, int64_t n_sample, int64_t *sizes, int64_t *nd) {
    *nd = tl_tensor_ndim(self);
    if (*nd == 2) sizes[0] = tl_tensor_size(self, 0);
    sizes[*nd - 1] = n_sample;
}

tl_tensor *tl_native_multinomial(tl_keyset ks, tl_tensor *self, int64_t num_samples, bool replacement,
                                 tl_generator *generator) {
    (void)ks;
    if (multinomial_check(self, num_samples, replacement)) return NULL;
    int64_t sizes[2], nd;
    multinomial_shape(self, num_samples, sizes, &nd);
    tl_tensor *out = tl_empty(nd, sizes, TL_INT64, tl__device_of(self));
    if (out && multinomial_fill(self, num_samples, replacement, generator, out)) {
        tl_tensor_release(out);
        return NULL;
    }
    return out;
}
tl_tensor *tl_native_multinomial_out(tl_keyset ks, tl_tensor *self, int64_t num_samples, bool replacement,
                                     tl_generator *generator, tl_tensor *out) {
    (void)ks;
    if (multinomial_check(self, num_samples, replacement)) return NULL;
    int64_t sizes[2], nd;
    multinomial_shape(self, num_samples, sizes, &nd);
    if (tl_structured_resize_out(out, nd, sizes, TL_DTYPE_UNDEFINED) ||
        multinomial_fill(self, num_samples, replacement, generator, out))
        return NULL;
    tl_tensor_retain(out);
    return out;
}

/* ------------------------------------------------------------ random_ */
/* PyTorch's random_impl / random_from_to_impl (ATen/native/DistributionTemplates.h)
 * and their CPU kernels: uniform_int (random_()), uniform_int_from_to
 * (random_(from, to), randint), uniform_int_full_range (random_(INT64_MIN, None)) */

static int mantissa_digits(tl_dtype dt) {
    switch (dt) {
    case TL_FLOAT64: return 53;
    case TL_FLOAT32: return 24;
    case TL_FLOAT16: return 11;
    case TL_BFLOAT16: return 8;
    default: return 0;
    }
}

/* C++'s type name, as PyTorch prints a TypeMeta */
static const char *type_meta_name(tl_dtype dt) {
    switch (dt) {
    case TL_INT64: return "long int";
    case TL_INT32: return "int";
    case TL_INT16: return "short int";
    case TL_INT8: return "signed char";
    case TL_UINT8: return "unsigned char";
    case TL_BOOL: return "bool";
    default: return c_type_name(dt);
    }
}

static void fill_uniform_int(tl_generator *g, tl_dtype dt, void *p, int64_t n, const void *ctx) {
    (void)ctx;
    for (int64_t i = 0; i < n; i++) {
        switch (dt) {
        case TL_BOOL: ((uint8_t *)p)[i] = tl_generator_random(g) & 1; break;
        case TL_INT64: ((int64_t *)p)[i] = (int64_t)(tl_generator_random64(g) % (1ull << 63)); break;
        case TL_FLOAT64: ((double *)p)[i] = (double)(tl_generator_random64(g) % ((1ull << 53) + 1)); break;
        case TL_INT32: ((int32_t *)p)[i] = (int32_t)(tl_generator_random(g) % (1ull << 31)); break;
        case TL_INT16: ((int16_t *)p)[i] = (int16_t)(tl_generator_random(g) % (1u << 15)); break;
        case TL_INT8: ((int8_t *)p)[i] = (int8_t)(tl_generator_random(g) % (1u << 7)); break;
        case TL_UINT8: ((uint8_t *)p)[i] = (uint8_t)(tl_generator_random(g) % (1u << 8)); break;
        default: /* float, half, bfloat16: [0, 2^digits] */
            store_as(dt, p, i, (double)(tl_generator_random(g) % ((1ull << mantissa_digits(dt)) + 1)));
        }
    }
}

typedef struct {
    uint64_t range; /* 0: the full 64-bit range */
    int64_t base;
} from_to_args;

static void fill_from_to(tl_generator *g, tl_dtype dt, void *p, int64_t n, const void *ctx) {
    const uint64_t range = ((const from_to_args *)ctx)->range;
    const int64_t base = ((const from_to_args *)ctx)->base;
    const bool wide = (dt == TL_INT64 || dt == TL_FLOAT64 || dt == TL_FLOAT32 || dt == TL_BFLOAT16) &&
                      range >= (1ull << 32);
    for (int64_t i = 0; i < n; i++) {
        int64_t v;
        if (range == 0) v = (int64_t)tl_generator_random64(g);
        else if (wide) v = (int64_t)(tl_generator_random64(g) % range + (uint64_t)base);
        else v = (int64_t)((uint64_t)tl_generator_random(g) % range + (uint64_t)base);
        if (dt == TL_INT64) ((int64_t *)p)[i] = v;
        else store_as(dt, p, i, (double)v);
    }
}

static int64_t update_from(int64_t from, int digits) {
    const int64_t from_plus_1 = (int64_t)(double)(from + 1);   /* as the dtype rounds it (digits <= 53) */
    if (from_plus_1 < from) {
        int64_t f = llabs(from + 1);
        int n = 0;
        while (f >>= 1) ++n;
        from = from_plus_1 + (1LL << (n - digits + 1));
    }
    return from;
}
static int64_t update_to(int64_t to, int digits) {
    const int64_t to_minus_1 = (int64_t)(double)(to - 1);
    if (to_minus_1 >= to) {
        int64_t t = llabs(to - 1);
        int n = 0;
        while (t >>= 1) ++n;
        to = to_minus_1 - (1LL << (n - digits + 1));
    }
    return to;
}

static int check_in_range(int64_t from, int64_t to_inc, tl_dtype dt) {
    double lo, hi;
    switch (dt) {
    case TL_BOOL: lo = 0, hi = 1; break;
    case TL_UINT8: lo = 0, hi = 255; break;
    case TL_INT8: lo = -128, hi = 127; break;
    case TL_INT16: lo = -32768, hi = 32767; break;
    case TL_INT32: lo = -2147483648.0, hi = 2147483647.0; break;
    case TL_INT64: return 0;
    default: lo = -dtype_max(dt), hi = dtype_max(dt);
    }
    if (!((double)from >= lo && (double)from <= hi))
        return tl_set_error(TL_ERR_RUNTIME, "from is out of bounds for %s", type_meta_name(dt));
    if (!((double)to_inc >= lo && (double)to_inc <= hi))
        return tl_set_error(TL_ERR_RUNTIME, "to - 1 is out of bounds for %s", type_meta_name(dt));
    return 0;
}

static tl_tensor *random_from_to(tl_tensor *self, int64_t from, int64_t to, bool has_to, tl_generator *gen) {
    const tl_dtype dt = tl_tensor_dtype(self);
    const int digits = mantissa_digits(dt);
    uint64_t range;
    if (has_to) {
        if (!(from < to))
            return tl_set_error(TL_ERR_RUNTIME, "random_ expects 'from' to be less than 'to', but got from=%lld >= "
                                "to=%lld", (long long)from, (long long)to), NULL;
        if (digits) {
            from = update_from(from, digits);
            to = update_to(to, digits);
            if (!(from < to))
                return tl_set_error(TL_ERR_RUNTIME, "random_ expects 'from' casted to dtype to be less than 'to' "
                                    "casted to dtype, but got from=%lld >= to=%lld", (long long)from,
                                    (long long)to), NULL;
        }
        if (check_in_range(from, to - 1, dt)) return NULL;
        range = (uint64_t)to - (uint64_t)from;
    } else if (from != INT64_MIN) {
        int64_t to_inc;
        if (digits) {
            to_inc = digits >= 63 ? INT64_MAX : (int64_t)1 << digits;
            from = update_from(from, digits);
            if (!(from < to_inc))
                return tl_set_error(TL_ERR_RUNTIME, "random_ expects 'from' casted to dtype to be less than or equal "
                                    "to 'to_inc' casted to dtype, but got from=%lld > to_inc=%lld",
                                    (long long)from, (long long)to_inc), NULL;
        } else {
            to_inc = dt == TL_BOOL ? 1 : dt == TL_UINT8 ? 255 : dt == TL_INT8 ? 127 : dt == TL_INT16 ? 32767
                   : dt == TL_INT32 ? 2147483647 : INT64_MAX;
        }
        if (check_in_range(from, to_inc, dt)) return NULL;
        range = (uint64_t)to_inc - (uint64_t)from + 1;
    } else {
        if (!(dt == TL_INT64 || dt == TL_FLOAT64 || dt == TL_FLOAT32 || dt == TL_BFLOAT16))
            return tl_set_error(TL_ERR_RUNTIME, "random_full_64_bits_range_kernel_cpu handles only int64, double, "
                                "float and bfloat16"), NULL;
        range = 0;
    }
    const from_to_args a = {range, from};
    return serial_fill(self, gen, fill_from_to, &a);
}

static int random_dtype_ok(tl_tensor *self) {
    const tl_dtype dt = tl_tensor_dtype(self);
    if (!tl_dtype_is_complex(dt)) return 0;
    return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"random_from_to_range_calc\" not implemented for '%s'",
                        tl_dtype_scalar_name(dt));
}

tl_tensor *tl_native_random_(tl_keyset ks, tl_tensor *self, int64_t from, int64_t to, bool to_has,
                             tl_generator *generator) {
    (void)ks;
    if (random_dtype_ok(self)) return NULL;
    return random_from_to(self, from, to, to_has, generator);
}
tl_tensor *tl_native_random___random__to(tl_keyset ks, tl_tensor *self, int64_t to, tl_generator *generator) {
    (void)ks;
    if (random_dtype_ok(self)) return NULL;
    return random_from_to(self, 0, to, true, generator);
}
tl_tensor *tl_native_random___random_(tl_keyset ks, tl_tensor *self, tl_generator *generator) {
    (void)ks;
    if (random_dtype_ok(self)) return NULL;
    return serial_fill(self, generator, fill_uniform_int, NULL);
}
