/* linspace / logspace and their Tensor-start / Tensor-end overloads
 * (aten/src/ATen/native/RangeFactories.cpp, cpu/RangeFactoriesKernel.cpp,
 * TensorFactories.cpp), value for value as PyTorch's CPU build computes them.
 *
 * start and end become the output dtype first (Scalar::to, overflow checked;
 * a float into an integer dtype truncates). linspace then steps in the
 * dtype's own arithmetic (integer dtypes: a double step, the result
 * truncated): the first half counts up from start, the second half down from
 * end, each value one fused multiply-add as the kernel's FMA build computes
 * it; float16 / bfloat16 round every operation to the type, as c10::Half and
 * c10::BFloat16 do. logspace computes the exponents in double without fusing
 * (RangeFactories.cpp is not built per CPU capability) and stores pow(base, x)
 * into the dtype. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "tl_error.h"
#include "tl_half.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/linspace.h"
#include "ops/logspace.h"
#include "tl_tensor.h"
#include "tl_ufunc.h"

static int check_steps(int64_t steps, int layout) {
    if (steps < 0) return tl_set_error(TL_ERR_RUNTIME, "number of steps must be non-negative");
    if (layout > 0) return tl_set_error(TL_ERR_RUNTIME, "only support layout=torch.strided, got%d", layout);
    return 0;
}

/* float x rounded to the 16-bit dtype dt (float32 and float64 unchanged) */
static float rnd(float x, tl_dtype dt) {
    if (dt == TL_FLOAT16) return tl_f16_to_f32(tl_f32_to_f16(x));
    if (dt == TL_BFLOAT16) return tl_bf16_to_f32(tl_f32_to_bf16(x));
    return x;
}

/* an int64 wrapped to the integer dtype dt, as static_cast does */
static int64_t wrap_int(int64_t v, tl_dtype dt) {
    switch (dt) {
    case TL_UINT8: return (uint8_t)v;
    case TL_INT8: return (int8_t)v;
    case TL_INT16: return (int16_t)v;
    case TL_INT32: return (int32_t)v;
    default: return v;
    }
}

/* a double stored into the integer dtype dt as x86-64 converts it: a
 * truncation, through int32 for the types up to 32 bits (out of range:
 * the "integer indefinite" INT_MIN / INT64_MIN) */
static int64_t double_to_int(double d, tl_dtype dt) {
    if (dt == TL_INT64) return d > -9223372036854775808.0 && d < 9223372036854775808.0 ? (int64_t)d : INT64_MIN;
    const int64_t t = d > -2147483649.0 && d < 2147483648.0 ? (int64_t)d : INT32_MIN;
    return wrap_int(t, dt);
}

static int store_double(double v, tl_dtype dt, char *dst) {
    return tl_scalar_store(tl_scalar_from_double(v), dt, dst);
}

static void linspace_fill(tl_scalar start, tl_scalar end, int64_t steps, tl_dtype dt, char *o) {
    const int64_t half = steps / 2, isz = tl_dtype_itemsize(dt);
    if (tl_dtype_is_integral(dt, 0)) {
        const int64_t a = wrap_int(tl_ufunc_scalar_as_int(start), dt), b = wrap_int(tl_ufunc_scalar_as_int(end), dt);
        const double step = ((double)b - (double)a) / (double)(steps - 1);
        for (int64_t i = 0; i < steps; i++) {
            const double v = i < half ? fma(step, (double)i, (double)a) : fma(-step, (double)(steps - i - 1), (double)b);
            tl_scalar_store(tl_scalar_from_int(double_to_int(v, dt)), dt, o + i * isz);
        }
    } else if (dt == TL_FLOAT64) {
        const double a = tl_ufunc_scalar_as_double(start), b = tl_ufunc_scalar_as_double(end);
        const double step = (b - a) / (double)(steps - 1);
        double *p = (double *)o;
        for (int64_t i = 0; i < steps; i++)
            p[i] = i < half ? fma(step, (double)i, a) : fma(-step, (double)(steps - i - 1), b);
    } else if (dt == TL_FLOAT32) {
        const float a = (float)tl_ufunc_scalar_as_double(start), b = (float)tl_ufunc_scalar_as_double(end);
        const float step = (b - a) / (float)(steps - 1);
        float *p = (float *)o;
        for (int64_t i = 0; i < steps; i++)
            p[i] = i < half ? fmaf(step, (float)i, a) : fmaf(-step, (float)(steps - i - 1), b);
    } else {   /* float16 / bfloat16: each operation rounds to the type */
        const float a = rnd((float)tl_ufunc_scalar_as_double(start), dt);
        const float b = rnd((float)tl_ufunc_scalar_as_double(end), dt);
        const float step = rnd(rnd(b - a, dt) / rnd((float)(steps - 1), dt), dt);
        for (int64_t i = 0; i < steps; i++) {
            const float v = i < half ? rnd(a + rnd(step * rnd((float)i, dt), dt), dt)
                                     : rnd(b - rnd(step * rnd((float)(steps - i - 1), dt), dt), dt);
            store_double(v, dt, o + i * isz);
        }
    }
}

static void logspace_fill(tl_scalar start, tl_scalar end, int64_t steps, double base, tl_dtype dt, char *o) {
    const int64_t half = steps / 2, isz = tl_dtype_itemsize(dt);
    double a, b, diff;
    if (tl_dtype_is_integral(dt, 0)) {
        const int64_t ia = wrap_int(tl_ufunc_scalar_as_int(start), dt), ib = wrap_int(tl_ufunc_scalar_as_int(end), dt);
        a = (double)ia, b = (double)ib, diff = (double)(ib - ia);
    } else if (dt == TL_FLOAT64) {
        a = tl_ufunc_scalar_as_double(start), b = tl_ufunc_scalar_as_double(end), diff = b - a;
    } else {   /* the difference in the dtype */
        const float fa = rnd((float)tl_ufunc_scalar_as_double(start), dt);
        const float fb = rnd((float)tl_ufunc_scalar_as_double(end), dt);
        a = fa, b = fb, diff = rnd(fb - fa, dt);
    }
    const double step = diff / (double)(steps - 1);
    for (int64_t i = 0; i < steps; i++) {
        volatile double prod = step * (double)(i < half ? i : steps - i - 1);   /* no fused multiply-add */
        const double v = pow(base, i < half ? a + prod : b - prod);
        if (tl_dtype_is_integral(dt, 0))
            tl_scalar_store(tl_scalar_from_int(double_to_int(v, dt)), dt, o + i * isz);
        else
            store_double(dt == TL_FLOAT64 ? v : (double)(float)v, dt, o + i * isz);   /* double -> float -> type */
    }
}

/* Scalar::to<dtype>'s overflow check; a negative float does not wrap into
 * uint8 as a negative integer does (c10's overflows for floating sources) */
static int scalar_fits(tl_scalar s, tl_dtype dt) {
    if (dt == TL_UINT8 && s.kind == TL_SCALAR_DOUBLE && s.d < 0)
        return tl_set_error(TL_ERR_RUNTIME, "value cannot be converted to type uint8_t without overflow");
    return tl_ufunc_scalar_check(s, dt);
}

static tl_tensor *space(tl_scalar start, tl_scalar end, int64_t steps, double base, bool log, tl_dtype dtype,
                        int layout, int device) {
    if (start.kind == TL_SCALAR_COMPLEX || end.kind == TL_SCALAR_COMPLEX || tl_dtype_is_complex(dtype)) {
        /* (PyTorch spaces complex values; torchlet's kernel is real) */
        tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", log ? "logspace_cpu" : "linspace_cpu",
                     tl_dtype_scalar_name(tl_dtype_is_complex(dtype) ? dtype : tl_get_default_complex_dtype()));
        return NULL;
    }
    if (tl__device_type_of(device) == TL_CUDA)  /* computed on the host, then copied */
        return tl__host_result_to(space(start, end, steps, base, log, dtype, layout, TL_CPU), device);
    if (check_steps(steps, layout)) return NULL;
    if (dtype == TL_DTYPE_UNDEFINED) dtype = tl_get_default_dtype();
    if (dtype == TL_BOOL)
        return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for 'Bool'",
                            log ? "logspace_cpu" : "linspace_cpu"), NULL;
    const tl_device_type dev = device < 0 ? TL_CPU : (tl_device_type)device;
    tl_tensor *r = tl_empty(1, &steps, dtype, dev);
    if (!r || dev == TL_META || steps == 0) return r;
    char *o = tl_tensor_data_ptr(r);
    int bad = 0;
    if (steps == 1) {   /* fill_(start), fill_(pow(base, start)) */
        const tl_scalar v = log ? tl_scalar_from_double(pow(base, tl_ufunc_scalar_as_double(start))) : start;
        bad = scalar_fits(v, dtype) || tl_scalar_store(v, dtype, o);
    } else if (!(bad = scalar_fits(start, dtype) || scalar_fits(end, dtype))) {
        if (log)
            logspace_fill(start, end, steps, base, dtype, o);
        else
            linspace_fill(start, end, steps, dtype, o);
    }
    if (!bad) return r;
    tl_tensor_release(r);
    return NULL;
}

tl_tensor *tl_native_linspace(tl_keyset ks, tl_scalar start, tl_scalar end, int64_t steps, tl_dtype dtype, int layout,
                              int device, bool pin_memory, bool pin_memory_has) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    return space(start, end, steps, 0, false, dtype, layout, device);
}

tl_tensor *tl_native_logspace(tl_keyset ks, tl_scalar start, tl_scalar end, int64_t steps, double base,
                              tl_dtype dtype, int layout, int device, bool pin_memory, bool pin_memory_has) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    return space(start, end, steps, base, true, dtype, layout, device);
}

/* ------------------------------------------------------------ Tensor overloads */

/* start / end given as tensors (NULL: given as a scalar) must be 0-d and are
 * read with item(); PyTorch's message names the tensors the overload takes */
static int bound_items(const char *op, const tl_tensor *start, const tl_tensor *end, tl_scalar *s, tl_scalar *e) {
    const bool bad = (start && start->ndim != 0) || (end && end->ndim != 0);
    if (bad && start && end)
        return tl_set_error(TL_ERR_RUNTIME,
                            "%s only supports 0-dimensional start and end tensors, but got start with %lld "
                            "dimension(s) and end with %lld dimension(s).",
                            op, (long long)start->ndim, (long long)end->ndim);
    if (bad)
        return tl_set_error(TL_ERR_RUNTIME,
                            "%s only supports 0-dimensional start and end tensors, but got %s with %lld dimension(s).",
                            op, start ? "start" : "end", (long long)(start ? start->ndim : end->ndim));
    if (start && tl_tensor_item(start, s)) return -1;
    if (end && tl_tensor_item(end, e)) return -1;
    return 0;
}

/* linspace / logspace over tensor bounds (NULL: the scalar in *s / *e) */
static tl_tensor *space_t(const char *op, const tl_tensor *ts, tl_scalar s, const tl_tensor *te, tl_scalar e,
                          int64_t steps, double base, bool log, tl_dtype dtype, int layout, int device) {
    if (bound_items(op, ts, te, &s, &e)) return NULL;
    return space(s, e, steps, base, log, dtype, layout, device);
}

static const tl_scalar NO_SCALAR = {TL_SCALAR_INT, 0, 0.0, 0.0};

tl_tensor *tl_native_linspace_Tensor_Tensor(tl_keyset ks, tl_tensor *start, tl_tensor *end, int64_t steps,
                                            tl_dtype dtype, int layout, int device, bool pin_memory,
                                            bool pin_memory_has) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    return space_t("linspace", start, NO_SCALAR, end, NO_SCALAR, steps, 0, false, dtype, layout, device);
}

tl_tensor *tl_native_linspace_Tensor_Scalar(tl_keyset ks, tl_tensor *start, tl_scalar end, int64_t steps,
                                            tl_dtype dtype, int layout, int device, bool pin_memory,
                                            bool pin_memory_has) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    return space_t("linspace", start, NO_SCALAR, NULL, end, steps, 0, false, dtype, layout, device);
}

tl_tensor *tl_native_linspace_Scalar_Tensor(tl_keyset ks, tl_scalar start, tl_tensor *end, int64_t steps,
                                            tl_dtype dtype, int layout, int device, bool pin_memory,
                                            bool pin_memory_has) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    return space_t("linspace", NULL, start, end, NO_SCALAR, steps, 0, false, dtype, layout, device);
}

tl_tensor *tl_native_logspace_Tensor_Tensor(tl_keyset ks, tl_tensor *start, tl_tensor *end, int64_t steps,
                                            double base, tl_dtype dtype, int layout, int device, bool pin_memory,
                                            bool pin_memory_has) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    return space_t("logspace", start, NO_SCALAR, end, NO_SCALAR, steps, base, true, dtype, layout, device);
}

tl_tensor *tl_native_logspace_Tensor_Scalar(tl_keyset ks, tl_tensor *start, tl_scalar end, int64_t steps,
                                            double base, tl_dtype dtype, int layout, int device, bool pin_memory,
                                            bool pin_memory_has) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    return space_t("logspace", start, NO_SCALAR, NULL, end, steps, base, true, dtype, layout, device);
}

tl_tensor *tl_native_logspace_Scalar_Tensor(tl_keyset ks, tl_scalar start, tl_tensor *end, int64_t steps,
                                            double base, tl_dtype dtype, int layout, int device, bool pin_memory,
                                            bool pin_memory_has) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    return space_t("logspace", NULL, start, end, NO_SCALAR, steps, base, true, dtype, layout, device);
}
