/* dtypes, type promotion and scalars (tl_dtype.h). */
#include <math.h>

#include "tl_half.h"
#include "tl_internal.h"

const int64_t tl__k_itemsize[TL_NUM_DTYPES] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16};
static const char *const k_name[TL_NUM_DTYPES] = {
    "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
    "complex64", "complex128"};
static const char *const k_scalar_name[TL_NUM_DTYPES] = {
    "Bool", "Byte", "Char", "Short", "Int", "Long", "Half", "BFloat16", "Float", "Double",
    "ComplexFloat", "ComplexDouble"};

static tl_dtype g_default_dtype = TL_FLOAT32;

int tl_dtype_valid(int dt) { return dt >= 0 && dt < TL_NUM_DTYPES; }

int64_t tl_dtype_itemsize(tl_dtype dt) { return tl_dtype_valid(dt) ? tl__k_itemsize[dt] : 0; }

const char *tl_dtype_name(tl_dtype dt) { return tl_dtype_valid(dt) ? k_name[dt] : "undefined"; }

const char *tl_dtype_scalar_name(tl_dtype dt) {
    return tl_dtype_valid(dt) ? k_scalar_name[dt] : "Undefined";
}

/* PyTorch's TypeMeta (C++ type) names, used in out= and autograd messages */
const char *tl_dtype_caffe2_name(tl_dtype dt) {
    switch (dt) {
    case TL_BOOL: return "bool";
    case TL_UINT8: return "unsigned char";
    case TL_INT8: return "signed char";
    case TL_INT16: return "short int";
    case TL_INT32: return "int";
    case TL_INT64: return "long int";
    case TL_FLOAT16: return "c10::Half";
    case TL_BFLOAT16: return "c10::BFloat16";
    case TL_FLOAT32: return "float";
    case TL_FLOAT64: return "double";
    case TL_COMPLEX64: return "c10::complex<float>";
    case TL_COMPLEX128: return "c10::complex<double>";
    default: return "undefined";
    }
}

int tl_dtype_is_floating(tl_dtype dt) {
    return dt == TL_FLOAT16 || dt == TL_BFLOAT16 || dt == TL_FLOAT32 || dt == TL_FLOAT64;
}

int tl_dtype_is_complex(tl_dtype dt) { return dt == TL_COMPLEX64 || dt == TL_COMPLEX128; }

tl_dtype tl_dtype_to_real(tl_dtype dt) {
    return dt == TL_COMPLEX64 ? TL_FLOAT32 : dt == TL_COMPLEX128 ? TL_FLOAT64 : dt;
}

tl_dtype tl_dtype_to_complex(tl_dtype dt) {
    if (tl_dtype_is_complex(dt)) return dt;
    return dt == TL_FLOAT64 ? TL_COMPLEX128 : TL_COMPLEX64;
}

int tl_dtype_is_integral(tl_dtype dt, int include_bool) {
    if (dt == TL_BOOL) return include_bool;
    return dt >= TL_UINT8 && dt <= TL_INT64;
}

int tl_dtype_is_signed(tl_dtype dt) {
    return dt != TL_BOOL && dt != TL_UINT8 && tl_dtype_valid(dt);
}

/* PyTorch's promoteTypes for the dtypes torchlet has. */
tl_dtype tl_promote_types(tl_dtype a, tl_dtype b) {
    if (!tl_dtype_valid(a)) return b;
    if (!tl_dtype_valid(b)) return a;
    if (a == b) return a;
    if (a == TL_BOOL) return b;
    if (b == TL_BOOL) return a;
    /* complex: the wider of the complex type and the other's real width
     * (complex64 + float64 = complex128, float16 + complex64 = complex64) */
    if (tl_dtype_is_complex(a) || tl_dtype_is_complex(b)) {
        if (a == TL_COMPLEX128 || b == TL_COMPLEX128 || a == TL_FLOAT64 || b == TL_FLOAT64) return TL_COMPLEX128;
        return TL_COMPLEX64;
    }
    int fa = tl_dtype_is_floating(a), fb = tl_dtype_is_floating(b);
    if (fa && fb) {
        if ((a == TL_FLOAT16 && b == TL_BFLOAT16) || (a == TL_BFLOAT16 && b == TL_FLOAT16))
            return TL_FLOAT32;
        return tl__k_itemsize[a] >= tl__k_itemsize[b] ? a : b;
    }
    if (fa) return a;
    if (fb) return b;
    /* both integral, not bool */
    if (a == TL_UINT8 || b == TL_UINT8) {
        tl_dtype other = a == TL_UINT8 ? b : a;     /* signed */
        return tl__k_itemsize[other] > 1 ? other : TL_INT16;
    }
    return tl__k_itemsize[a] >= tl__k_itemsize[b] ? a : b;
}

int tl_can_cast(tl_dtype from, tl_dtype to) {
    if (tl_dtype_is_complex(from) && !tl_dtype_is_complex(to)) return 0;
    if (tl_dtype_is_floating(from) && tl_dtype_is_integral(to, 1)) return 0;
    if (from != TL_BOOL && to == TL_BOOL) return 0;
    return 1;
}

tl_dtype tl_get_default_dtype(void) { return g_default_dtype; }

tl_dtype tl_get_default_complex_dtype(void) {
    return g_default_dtype == TL_FLOAT64 ? TL_COMPLEX128 : TL_COMPLEX64;
}

int tl_set_default_dtype(tl_dtype dt) {
    if (!tl_dtype_is_floating(dt))
        return tl_set_error(TL_ERR_TYPE, "only floating-point types are supported as the default type");
    g_default_dtype = dt;
    return 0;
}

tl_dtype tl_scalar_dtype(tl_scalar s) {
    switch (s.kind) {
    case TL_SCALAR_BOOL: return TL_BOOL;
    case TL_SCALAR_INT: return TL_INT64;
    case TL_SCALAR_COMPLEX: return TL_COMPLEX128;
    default: return TL_FLOAT64;
    }
}

tl_scalar tl_scalar_from_bool(int v) { tl_scalar s = {TL_SCALAR_BOOL, v != 0, v != 0, 0.0}; return s; }
tl_scalar tl_scalar_from_int(int64_t v) { tl_scalar s = {TL_SCALAR_INT, v, (double)v, 0.0}; return s; }
tl_scalar tl_scalar_from_double(double v) {
    tl_scalar s = {TL_SCALAR_DOUBLE, 0, v, 0.0};
    return s;
}
tl_scalar tl_scalar_from_complex(double re, double im) {
    tl_scalar s = {TL_SCALAR_COMPLEX, 0, re, im};
    return s;
}

/* float -> integer conversions that never invoke UB on out-of-range input:
 * in-range values truncate like C; NaN gives 0; others saturate to int64 and
 * then wrap to the target width (what x86 + numpy give for moderate values). */
static inline int64_t tl__f64_to_i64(double d) {
    if (d != d) return INT64_MIN;
    if (d >= 9223372036854775807.0) return INT64_MIN;  /* x86 cvttsd2si "indefinite" */
    if (d < -9223372036854775808.0) return INT64_MIN;
    return (int64_t)d;
}

int tl_scalar_store(tl_scalar s, tl_dtype dt, void *dst) {
    /* a complex value stored into a real dtype keeps its real part (bool: either part) */
    int isf = s.kind == TL_SCALAR_DOUBLE || s.kind == TL_SCALAR_COMPLEX;
    double im = s.kind == TL_SCALAR_COMPLEX ? s.im : 0.0;
    double d = isf ? s.d : (double)s.i;
    int64_t i = isf ? tl__f64_to_i64(s.d) : s.i;
    switch (dt) {
    case TL_BOOL: { uint8_t v = isf ? (s.d != 0 || im != 0) : (s.i != 0); memcpy(dst, &v, 1); return 0; }
    case TL_UINT8: { uint8_t v = (uint8_t)i; memcpy(dst, &v, 1); return 0; }
    case TL_INT8: { int8_t v = (int8_t)i; memcpy(dst, &v, 1); return 0; }
    case TL_INT16: { int16_t v = (int16_t)i; memcpy(dst, &v, 2); return 0; }
    case TL_INT32: { int32_t v = (int32_t)i; memcpy(dst, &v, 4); return 0; }
    case TL_INT64: { memcpy(dst, &i, 8); return 0; }
    case TL_FLOAT16: { uint16_t v = tl_f64_to_f16(d); memcpy(dst, &v, 2); return 0; }
    case TL_BFLOAT16: { uint16_t v = tl_f32_to_bf16((float)d); memcpy(dst, &v, 2); return 0; }
    case TL_FLOAT32: { float v = (float)d; memcpy(dst, &v, 4); return 0; }
    case TL_FLOAT64: { memcpy(dst, &d, 8); return 0; }
    case TL_COMPLEX64: { float v[2] = {(float)d, (float)im}; memcpy(dst, v, 8); return 0; }
    case TL_COMPLEX128: { double v[2] = {d, im}; memcpy(dst, v, 16); return 0; }
    default: return tl_set_error(TL_ERR_VALUE, "invalid dtype %d", (int)dt);
    }
}

int tl_scalar_load(const void *src, tl_dtype dt, tl_scalar *out) {
    switch (dt) {
    case TL_BOOL: { uint8_t v; memcpy(&v, src, 1); *out = tl_scalar_from_bool(v != 0); return 0; }
    case TL_UINT8: { uint8_t v; memcpy(&v, src, 1); *out = tl_scalar_from_int(v); return 0; }
    case TL_INT8: { int8_t v; memcpy(&v, src, 1); *out = tl_scalar_from_int(v); return 0; }
    case TL_INT16: { int16_t v; memcpy(&v, src, 2); *out = tl_scalar_from_int(v); return 0; }
    case TL_INT32: { int32_t v; memcpy(&v, src, 4); *out = tl_scalar_from_int(v); return 0; }
    case TL_INT64: { int64_t v; memcpy(&v, src, 8); *out = tl_scalar_from_int(v); return 0; }
    case TL_FLOAT16: { uint16_t v; memcpy(&v, src, 2); *out = tl_scalar_from_double(tl_f16_to_f32_portable(v)); return 0; }
    case TL_BFLOAT16: { uint16_t v; memcpy(&v, src, 2); *out = tl_scalar_from_double(tl_bf16_to_f32(v)); return 0; }
    case TL_FLOAT32: { float v; memcpy(&v, src, 4); *out = tl_scalar_from_double(v); return 0; }
    case TL_FLOAT64: { double v; memcpy(&v, src, 8); *out = tl_scalar_from_double(v); return 0; }
    case TL_COMPLEX64: { float v[2]; memcpy(v, src, 8); *out = tl_scalar_from_complex(v[0], v[1]); return 0; }
    case TL_COMPLEX128: { double v[2]; memcpy(v, src, 16); *out = tl_scalar_from_complex(v[0], v[1]); return 0; }
    default: return tl_set_error(TL_ERR_VALUE, "invalid dtype %d", (int)dt);
    }
}
