/* The in-place random distributions: uniform_, normal_, cauchy_,
 * exponential_, geometric_, log_normal_ (Tensor methods, PyTorch's
 * schemas, checks and messages).
 *
 * Each draws one uniform double in [0, 1) per element from the generator
 * (the given one or the default, tl_generator_next_double: the Philox stream
 * that rand and randperm use, so manual_seed makes them reproducible), maps
 * it through the distribution's inverse CDF (normal: Box-Muller on pairs) in
 * double, and copies the values into self, rounding once to its dtype.
 * PyTorch's exact streams are not reproduced; the distributions are.
 */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#include "tl_error.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/bernoulli.h"
#include "ops/cauchy.h"
#include "ops/empty_like.h"
#include "ops/expand.h"
#include "ops/exponential.h"
#include "ops/geometric.h"
#include "ops/log_normal.h"
#include "ops/multinomial.h"
#include "ops/normal.h"
#include "ops/rand_like.h"
#include "ops/randint.h"
#include "ops/randint_like.h"
#include "ops/randn.h"
#include "ops/randn_like.h"
#include "ops/uniform.h"
#include "tl_runtime.h"
#include "tl_structured.h"
#include "tl_tensor.h"

typedef double (*dist_fn)(tl_generator *g, double a, double b);

/* self <- f(g, a, b) element by element, through a float64 buffer */
static tl_tensor *fill_with(tl_tensor *self, tl_generator *gen, dist_fn f, double a, double b) {
    if (tl_tensor_device(self) == TL_META || tl_tensor_numel(self) == 0) {
        tl_tensor_retain(self);
        return self;
    }
    tl_generator *g = gen ? gen : tl_default_generator();
    tl_tensor *tmp = tl_empty(tl_tensor_ndim(self), tl_tensor_sizes(self), TL_FLOAT64, TL_CPU);
    if (!tmp) return NULL;
    double *v = tl_tensor_data_ptr(tmp);
    for (int64_t i = 0, n = tl_tensor_numel(tmp); i < n; i++) v[i] = f(g, a, b);
    const int rc = tl_copy_(self, tmp);
    tl_tensor_release(tmp);
    if (rc != 0) return NULL;
    tl_tensor_retain(self);
    return self;
}

static double draw_uniform(tl_generator *g, double from, double to) {
    return from + (to - from) * tl_generator_next_double(g);
}
/* Box-Muller: one of the pair (u1 in (0, 1]) */
static double draw_normal(tl_generator *g, double mean, double std) {
    const double u1 = 1.0 - tl_generator_next_double(g), u2 = tl_generator_next_double(g);
    return mean + std * sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}
static double draw_log_normal(tl_generator *g, double mean, double std) { return exp(draw_normal(g, mean, std)); }
static double draw_cauchy(tl_generator *g, double median, double sigma) {
    return median + sigma * tan(M_PI * (tl_generator_next_double(g) - 0.5));
}
static double draw_exponential(tl_generator *g, double lambd, double unused) {
    (void)unused;
    return -log1p(-tl_generator_next_double(g)) / lambd;   /* 1 - u in (0, 1]: finite */
}
/* the number of Bernoulli(p) trials up to the first success: ceil(log(u) / log(1 - p)), u in (0, 1] */
static double draw_geometric(tl_generator *g, double p, double unused) {
    (void)unused;
    const double r = ceil(log(1.0 - tl_generator_next_double(g)) / log1p(-p));
    return r < 1 ? 1 : r;
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

/* PyTorch's check_uniform_bounds */
tl_tensor *tl_native_uniform_(tl_keyset ks, tl_tensor *self, double from, double to, tl_generator *generator) {
    (void)ks;
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
    return fill_with(self, generator, draw_uniform, from, to);
}

tl_tensor *tl_native_normal_(tl_keyset ks, tl_tensor *self, double mean, double std, tl_generator *generator) {
    (void)ks;
    if (!(std >= 0.0))
        return tl_set_error(TL_ERR_RUNTIME, "normal expects std >= 0.0, but found std %g", std), NULL;
    if (require_floating(self, "normal_kernel_cpu")) return NULL;
    return fill_with(self, generator, draw_normal, mean, std);
}

tl_tensor *tl_native_log_normal_(tl_keyset ks, tl_tensor *self, double mean, double std, tl_generator *generator) {
    (void)ks;
    if (!(std > 0.0))
        return tl_set_error(TL_ERR_RUNTIME, "log_normal_ expects std > 0.0, but found std=%g", std), NULL;
    if (require_floating(self, "log_normal_cpu")) return NULL;
    return fill_with(self, generator, draw_log_normal, mean, std);
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
    return fill_with(self, generator, draw_cauchy, median, sigma);
}

tl_tensor *tl_native_exponential_(tl_keyset ks, tl_tensor *self, double lambd, tl_generator *generator) {
    (void)ks;
    if (!(lambd > 0.0))
        return tl_set_error(TL_ERR_RUNTIME, "exponential_ expects lambda > 0.0, but found lambda=%g", lambd), NULL;
    const tl_dtype dt = tl_tensor_dtype(self);
    if (!tl_dtype_is_floating(dt))
        return tl_set_error(TL_ERR_RUNTIME, "Exponential distribution is a continuous probability distribution. "
                            "dtype must be a floating point but you specified %s", tl_dtype_scalar_name(dt)), NULL;
    return fill_with(self, generator, draw_exponential, lambd, 0);
}

/* every dtype (integers and bool too, as PyTorch) */
tl_tensor *tl_native_geometric_(tl_keyset ks, tl_tensor *self, double p, tl_generator *generator) {
    (void)ks;
    if (!(p > 0 && p < 1))
        return tl_set_error(TL_ERR_RUNTIME, "geometric_ expects p to be in (0, 1), but got p=%g", p), NULL;
    return fill_with(self, generator, draw_geometric, p, 0);
}

/* bernoulli_(p): 1 where u < p, for every dtype (bool and integers too) */
static double draw_bernoulli(tl_generator *g, double p, double unused) {
    (void)unused;
    return tl_generator_next_double(g) < p ? 1.0 : 0.0;
}

tl_tensor *tl_native_bernoulli__float(tl_keyset ks, tl_tensor *self, double p, tl_generator *generator) {
    (void)ks;
    if (!(p >= 0 && p <= 1))
        return tl_set_error(TL_ERR_RUNTIME, "bernoulli_ expects p to be in [0, 1], but got p=%g", p), NULL;
    return fill_with(self, generator, draw_bernoulli, p, 0);
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
        for (int64_t i = 0; i < n && rc == 0; i++) v[i] = tl_generator_next_double(g) < v[i] ? 1.0 : 0.0;
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
 * out <- mean + std * z, z standard normal, mean / std a tensor (broadcast to
 * out's shape, read through float64 copies) or a number */
static int normal_fill(tl_tensor *out, tl_tensor *mean_t, double mean, tl_tensor *std_t, double std,
                       tl_generator *gen) {
    if (tl_tensor_device(out) == TL_META || tl_tensor_numel(out) == 0) return 0;
    const int64_t nd = tl_tensor_ndim(out), *sz = tl_tensor_sizes(out);
    tl_generator *g = gen ? gen : tl_default_generator();
    tl_tensor *v = tl_empty(nd, sz, TL_FLOAT64, TL_CPU), *m = NULL, *s = NULL;
    int rc = v ? 0 : -1;
    if (rc == 0 && mean_t) rc = (m = tl_empty(nd, sz, TL_FLOAT64, TL_CPU)) ? tl_copy_(m, mean_t) : -1;
    if (rc == 0 && std_t) rc = (s = tl_empty(nd, sz, TL_FLOAT64, TL_CPU)) ? tl_copy_(s, std_t) : -1;
    if (rc == 0) {
        double *vv = tl_tensor_data_ptr(v);
        const double *mv = m ? tl_tensor_data_ptr(m) : NULL, *sv = s ? tl_tensor_data_ptr(s) : NULL;
        for (int64_t i = 0, n = tl_tensor_numel(v); i < n; i++)
            vv[i] = (mv ? mv[i] : mean) + (sv ? sv[i] : std) * draw_normal(g, 0, 1);
        rc = tl_copy_(out, v);
    }
    tl_tensor_release(v);
    tl_tensor_release(m);
    tl_tensor_release(s);
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
    tl_tensor *out = tl_empty(tl_tensor_ndim(mean), tl_tensor_sizes(mean), tl_tensor_dtype(mean), tl_tensor_device(mean));
    return normal_result(out, mean, 0, NULL, std, generator);
}
tl_tensor *tl_native_normal_float_Tensor(tl_keyset ks, double mean, tl_tensor *std, tl_generator *generator) {
    (void)ks;
    if (check_std_tensor(std)) return NULL;
    tl_tensor *out = tl_empty(tl_tensor_ndim(std), tl_tensor_sizes(std), tl_tensor_dtype(std), tl_tensor_device(std));
    return normal_result(out, NULL, mean, std, 0, generator);
}
tl_tensor *tl_native_normal_Tensor_Tensor(tl_keyset ks, tl_tensor *mean, tl_tensor *std, tl_generator *generator) {
    (void)ks;
    int64_t sizes[64], nd;
    if (check_std_tensor(std) || broadcast_shape(mean, std, sizes, &nd)) return NULL;
    tl_tensor *out = tl_empty(nd, sizes, tl_tensor_dtype(mean), tl_tensor_device(mean));
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
    tl_tensor *r = tl_ops_randn_generator(size, size_len, generator, dtype, layout, device, pin_memory, pin_memory_has);
    tl_tensor *f = r ? tl_ops_normal_(r, mean, std, generator) : NULL;
    tl_tensor_release(r);
    return f;
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
                    const double t = tl_generator_next_double(g) * total;
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
                for (int64_t j = 0; j < k; j++)
                    key[j] = row[j] > 0 ? -log1p(-tl_generator_next_double(g)) / row[j] : INFINITY;
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
    tl_tensor *out = tl_empty(nd, sizes, TL_INT64, tl_tensor_device(self));
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
