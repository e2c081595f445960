/* Factory operators (yaml/native_functions.yaml: empty.memory_format,
 * empty_strided, zeros, ones, full, arange*, rand*, randn*, *_like).
 * BackendSelect (generated) routes a factory call to the backend of its
 * `device=` argument; these kernels serve CPU and Meta and read `device`
 * themselves (-1: CPU). Meta tensors get metadata only. */
#include <math.h>
#include <string.h>

#include "random_draws.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/arange.h"
#include "ops/empty.h"
#include "ops/empty_like.h"
#include "ops/empty_strided.h"
#include "ops/full.h"
#include "ops/full_like.h"
#include "ops/normal.h"
#include "ops/ones.h"
#include "ops/ones_like.h"
#include "ops/rand.h"
#include "ops/randn.h"
#include "ops/uniform.h"
#include "ops/zeros.h"
#include "ops/zeros_like.h"

static int check_layout(int layout) {
    if (layout > 0)
        return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "torchlet supports only the strided layout (torch.strided)");
    return 0;
}

static int check_memory_format(int mf, int allow_preserve) {
    if (mf < 0 || mf == TL_CONTIGUOUS_FORMAT || (allow_preserve && mf == TL_PRESERVE_FORMAT)) return 0;
    if (mf == TL_PRESERVE_FORMAT)
        return tl_set_error(TL_ERR_RUNTIME, "preserve_format is not supported by torch.empty");
    return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "torchlet supports only torch.contiguous_format and torch.preserve_format");
}

static tl_device_type device_or_cpu(int device) { return device < 0 ? TL_CPU : (tl_device_type)device; }

static tl_dtype dtype_or_default(tl_dtype dtype) {
    return dtype == TL_DTYPE_UNDEFINED ? tl_get_default_dtype() : dtype;
}

tl_tensor *tl_native_empty_memory_format(tl_keyset ks, const int64_t *size, int64_t size_len, tl_dtype dtype,
                                         int layout, int device, bool pin_memory, bool pin_memory_has,
                                         int memory_format) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    if (check_layout(layout) || check_memory_format(memory_format, 0)) return NULL;
    return tl_empty(size_len, size, dtype_or_default(dtype), device_or_cpu(device));
}

tl_tensor *tl_native_empty_strided(tl_keyset ks, const int64_t *size, int64_t size_len, const int64_t *stride,
                                   int64_t stride_len, tl_dtype dtype, int layout, int device, bool pin_memory,
                                   bool pin_memory_has) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    if (check_layout(layout)) return NULL;
    if (size_len != stride_len) {
        tl_set_error(TL_ERR_RUNTIME, "mismatch in length of strides and shape");
        return NULL;
    }
    return tl_empty_strided(size_len, size, stride, dtype_or_default(dtype), device_or_cpu(device));
}

static tl_tensor *full_impl(const int64_t *size, int64_t size_len, tl_scalar v, tl_dtype dtype, int layout,
                            int device) {
    if (check_layout(layout)) return NULL;
    return tl_full(size_len, size, v, dtype, device_or_cpu(device));
}

tl_tensor *tl_native_zeros(tl_keyset ks, const int64_t *size, int64_t size_len, tl_dtype dtype, int layout,
                           int device, bool pin_memory, bool pin_memory_has) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    return full_impl(size, size_len, tl_scalar_from_int(0), dtype_or_default(dtype), layout, device);
}

tl_tensor *tl_native_ones(tl_keyset ks, const int64_t *size, int64_t size_len, tl_dtype dtype, int layout,
                          int device, bool pin_memory, bool pin_memory_has) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    return full_impl(size, size_len, tl_scalar_from_int(1), dtype_or_default(dtype), layout, device);
}

/* full's dtype follows the fill value when not given: bool, int64, default
 * float, default complex */
tl_tensor *tl_native_full(tl_keyset ks, const int64_t *size, int64_t size_len, tl_scalar fill_value, tl_dtype dtype,
                          int layout, int device, bool pin_memory, bool pin_memory_has) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    if (dtype == TL_DTYPE_UNDEFINED)
        dtype = fill_value.kind == TL_SCALAR_DOUBLE    ? tl_get_default_dtype()
                : fill_value.kind == TL_SCALAR_COMPLEX ? tl_get_default_complex_dtype()
                                                       : tl_scalar_dtype(fill_value);
    return full_impl(size, size_len, fill_value, dtype, layout, device);
}

/* ------------------------------------------------------------------ arange */

static double scalar_as_double(tl_scalar s) { return s.kind == TL_SCALAR_DOUBLE ? s.d : (double)s.i; }

static tl_tensor *arange_impl(tl_scalar start, tl_scalar end, tl_scalar step, tl_dtype dtype, int layout,
                              int device) {
    if (tl__device_type_of(device) == TL_CUDA)  /* computed on the host, then copied */
        return tl__host_result_to(arange_impl(start, end, step, dtype, layout, TL_CPU), device);
    if (check_layout(layout)) return NULL;
    if (dtype == TL_DTYPE_UNDEFINED) {
        int any_float = start.kind == TL_SCALAR_DOUBLE || end.kind == TL_SCALAR_DOUBLE || step.kind == TL_SCALAR_DOUBLE;
        dtype = any_float ? tl_get_default_dtype() : TL_INT64;
    }
    if (!tl_dtype_valid(dtype) || dtype == TL_BOOL) {
        tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"arange_cpu\" not implemented for '%s'",
                     tl_dtype_valid(dtype) ? tl_dtype_scalar_name(dtype) : "Undefined");
        return NULL;
    }
    int64_t n;
    int integral = tl_dtype_is_integral(dtype, 0);
    double xs = scalar_as_double(start), xe = scalar_as_double(end), xst = scalar_as_double(step);
    int64_t is = 0, ist = 0;
    if (integral) {
        /* like PyTorch, the bounds are first converted to the result type */
        if (!isfinite(xs) || !isfinite(xe)) {
            tl_set_error(TL_ERR_RUNTIME, "unsupported range: %g -> %g", xs, xe);
            return NULL;
        }
        is = start.kind == TL_SCALAR_DOUBLE ? (int64_t)xs : start.i;
        int64_t ie = end.kind == TL_SCALAR_DOUBLE ? (int64_t)xe : end.i;
        ist = step.kind == TL_SCALAR_DOUBLE ? (int64_t)xst : step.i;
        /* PyTorch counts int64 ranges in int64 (a float step that truncates
         * to 0 is its ValueError) and the narrower integer types with the
         * double values, stepping by the truncated step (maybe 0) */
        const int wide = dtype == TL_INT64;
        if (xst == 0 || (wide && ist == 0)) {
            tl_set_error(xst == 0 ? TL_ERR_RUNTIME : TL_ERR_VALUE, "step must be nonzero");
            return NULL;
        }
        if (wide ? ((ist > 0 && ie < is) || (ist < 0 && ie > is)) : ((xst > 0 && xe < xs) || (xst < 0 && xe > xs))) {
            tl_set_error(TL_ERR_RUNTIME, "upper bound and lower bound inconsistent with step sign");
            return NULL;
        }
        /* int64: ceil((ie - is) / ist) without overflow, in long double; the
         * narrower types in double, as PyTorch (long double would see
         * 1.1 - 0.1 > 1 and count one element more) */
        long double q = wide ? ((long double)ie - (long double)is) / (long double)ist
                             : (long double)((xe - xs) / xst);
        long double c = ceill(q);
        if (c > (long double)INT64_MAX) {
            tl_set_error(TL_ERR_RUNTIME, "arange: result too large");
            return NULL;
        }
        n = (int64_t)c;
    } else {
        if (!isfinite(xs) || !isfinite(xe)) {
            tl_set_error(TL_ERR_RUNTIME, "unsupported range: %g -> %g", xs, xe);
            return NULL;
        }
        if (xst == 0) {
            tl_set_error(TL_ERR_RUNTIME, "step must be nonzero");
            return NULL;
        }
        if ((xst > 0 && xe < xs) || (xst < 0 && xe > xs)) {
            tl_set_error(TL_ERR_RUNTIME, "upper bound and lower bound inconsistent with step sign");
            return NULL;
        }
        double c = ceil((xe - xs) / xst);
        if (!(c < 9.2e18)) {
            tl_set_error(TL_ERR_RUNTIME, "arange: result too large");
            return NULL;
        }
        n = (int64_t)c;
    }
    tl_device_type dev = device_or_cpu(device);
    tl_tensor *t = tl_empty(1, &n, dtype, dev);
    if (!t || dev == TL_META) return t;
    char *p = (char *)tl_tensor_data_ptr(t);
    int64_t isz = tl_dtype_itemsize(dtype);
    for (int64_t i = 0; i < n; i++) {
        tl_scalar v = integral ? tl_scalar_from_int((int64_t)((uint64_t)is + (uint64_t)i * (uint64_t)ist))
                               : tl_scalar_from_double(xs + (double)i * xst);
        tl_scalar_store(v, dtype, p + i * isz);
    }
    return t;
}

tl_tensor *tl_native_arange(tl_keyset ks, tl_scalar end, tl_dtype dtype, int layout, int device, bool pin_memory,
                            bool pin_memory_has) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    return arange_impl(tl_scalar_from_int(0), end, tl_scalar_from_int(1), dtype, layout, device);
}

tl_tensor *tl_native_arange_start(tl_keyset ks, tl_scalar start, tl_scalar end, tl_dtype dtype, int layout,
                                  int device, bool pin_memory, bool pin_memory_has) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    return arange_impl(start, end, tl_scalar_from_int(1), dtype, layout, device);
}

tl_tensor *tl_native_arange_start_step(tl_keyset ks, tl_scalar start, tl_scalar end, tl_scalar step, tl_dtype dtype,
                                       int layout, int device, bool pin_memory, bool pin_memory_has) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    return arange_impl(start, end, step, dtype, layout, device);
}

/* ------------------------------------------------------------------ random */

/* PyTorch's rand / randn / normal(mean, std, size): empty(size), then
 * uniform_(a, b) / normal_(a, b) on it (kernels/native/distributions.c) */
tl_tensor *tl__random_factory(const int64_t *size, int64_t size_len, tl_generator *gen, tl_dtype dtype, int layout,
                              int device, int normal, double a, double b) {
    if (tl__device_type_of(device) == TL_CUDA)  /* computed on the host, then copied */
        return tl__host_result_to(tl__random_factory(size, size_len, gen, dtype, layout, TL_CPU, normal, a, b),
                                  device);
    if (check_layout(layout)) return NULL;
    dtype = dtype_or_default(dtype);
    if (!tl_dtype_valid(dtype) || !(tl_dtype_is_floating(dtype) || tl_dtype_is_complex(dtype))) {
        /* AT_DISPATCH's error: c10::NotImplementedError, as torch raises it */
        tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", normal ? "normal_kernel_cpu" : "check_uniform_bounds",
                     tl_dtype_valid(dtype) ? tl_dtype_scalar_name(dtype) : "Undefined");
        return NULL;
    }
    tl_device_type dev = device_or_cpu(device);
    tl_tensor *t = tl_empty(size_len, size, dtype, dev);
    if (!t || dev == TL_META) return t;
    tl_tensor *r = normal ? tl_ops_normal_(t, a, b, gen) : tl_ops_uniform_(t, a, b, gen);
    tl_tensor_release(t);
    return r;
}

static tl_tensor *random_impl(const int64_t *size, int64_t size_len, tl_generator *gen, tl_dtype dtype, int layout,
                              int device, int normal) {
    return tl__random_factory(size, size_len, gen, dtype, layout, device, normal, 0, 1);
}

tl_tensor *tl_native_rand(tl_keyset ks, const int64_t *size, int64_t size_len, tl_dtype dtype, int layout, int device,
                          bool pin_memory, bool pin_memory_has) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    return random_impl(size, size_len, NULL, dtype, layout, device, 0);
}

tl_tensor *tl_native_rand_generator(tl_keyset ks, const int64_t *size, int64_t size_len, tl_generator *generator,
                                    tl_dtype dtype, int layout, int device, bool pin_memory, bool pin_memory_has) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    return random_impl(size, size_len, generator, dtype, layout, device, 0);
}

tl_tensor *tl_native_randn(tl_keyset ks, const int64_t *size, int64_t size_len, tl_dtype dtype, int layout, int device,
                           bool pin_memory, bool pin_memory_has) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    return random_impl(size, size_len, NULL, dtype, layout, device, 1);
}

tl_tensor *tl_native_randn_generator(tl_keyset ks, const int64_t *size, int64_t size_len, tl_generator *generator,
                                     tl_dtype dtype, int layout, int device, bool pin_memory, bool pin_memory_has) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    return random_impl(size, size_len, generator, dtype, layout, device, 1);
}

/* ------------------------------------------------------------------- *_like */

/* empty tensor like self: dtype/device overridable; preserve_format (the
 * default) keeps self's strides when they are dense, else contiguous */
static tl_tensor *like_impl(tl_tensor *self, tl_dtype dtype, int layout, int device, int memory_format) {
    if (check_layout(layout) || check_memory_format(memory_format, 1)) return NULL;
    tl_dtype dt = dtype == TL_DTYPE_UNDEFINED ? tl_tensor_dtype(self) : dtype;
    tl_device_type dev = device < 0 ? tl__device_of(self) : (tl_device_type)device;
    int preserve = memory_format < 0 || memory_format == TL_PRESERVE_FORMAT;
    if (preserve && tl_tensor_is_non_overlapping_and_dense(self))
        return tl_empty_strided(tl_tensor_ndim(self), tl_tensor_sizes(self), tl_tensor_strides(self), dt, dev);
    return tl_empty(tl_tensor_ndim(self), tl_tensor_sizes(self), dt, dev);
}

static tl_tensor *filled(tl_tensor *t, tl_scalar v) {
    if (t && tl_fill_(t, v) != 0) {
        tl_tensor_release(t);
        return NULL;
    }
    return t;
}

tl_tensor *tl_native_empty_like(tl_keyset ks, tl_tensor *self, tl_dtype dtype, int layout, int device, bool pin_memory,
                                bool pin_memory_has, int memory_format) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    return like_impl(self, dtype, layout, device, memory_format);
}

tl_tensor *tl_native_zeros_like(tl_keyset ks, tl_tensor *self, tl_dtype dtype, int layout, int device, bool pin_memory,
                                bool pin_memory_has, int memory_format) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    return filled(like_impl(self, dtype, layout, device, memory_format), tl_scalar_from_int(0));
}

tl_tensor *tl_native_ones_like(tl_keyset ks, tl_tensor *self, tl_dtype dtype, int layout, int device, bool pin_memory,
                               bool pin_memory_has, int memory_format) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    return filled(like_impl(self, dtype, layout, device, memory_format), tl_scalar_from_int(1));
}

tl_tensor *tl_native_full_like(tl_keyset ks, tl_tensor *self, tl_scalar fill_value, tl_dtype dtype, int layout,
                               int device, bool pin_memory, bool pin_memory_has, int memory_format) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    return filled(like_impl(self, dtype, layout, device, memory_format), fill_value);
}
