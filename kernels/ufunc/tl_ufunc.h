/* torchlet ufunc machinery (internal, header-only): what the generated
 * per-dtype inner loops in generated/kernels/ufunc_<op>.c build on.
 *
 * A pointwise operator's arithmetic is one formula, `TL_UFUNC_<name>(...)` in
 * kernels/ufunc/<name>.h, written over *compute* values (C arithmetic on
 * bool / integers / float / double; float16 and bfloat16 are computed in
 * float, their "opmath" type, and rounded once when stored). The generator
 * (codegen/emit/ufunc.py, docs/UFUNC.md) expands it into one tl_loop_fn per
 * dtype, compiled once per CPU capability (DEFAULT / AVX2 / AVX512).
 *
 * Kept to plain C so the same formulas can be compiled as CUDA C later.
 */
#ifndef TL_UFUNC_H
#define TL_UFUNC_H

#include <stdbool.h>
#include <stdint.h>

#include "tl_dtype.h"
#include "tl_half.h"
#include "tl_kernel.h"
#include "tl_error.h"

/* numeric id of the capability this translation unit is compiled for, usable
 * in #if (the once-per-library parts of a generated kernel file live under
 * `#if TL_UFUNC_CAPID == 0`) */
#define TL_UFUNC_CAPID_DEFAULT 0
#define TL_UFUNC_CAPID_AVX2 1
#define TL_UFUNC_CAPID_AVX512 2
#ifdef CPU_CAPABILITY
#define TL_UFUNC_CAPID TL_CAT(TL_UFUNC_CAPID, CPU_CAPABILITY)
#endif

/* one scalar extra argument (alpha, negative_slope, ...) converted once per
 * call into the compute type of the loop's dtype */
typedef union tl_opmath {
    bool b;
    uint8_t u8;
    int8_t i8;
    int16_t i16;
    int32_t i32;
    int64_t i64;
    float f32;   /* float32, float16 and bfloat16 loops */
    double f64;
} tl_opmath;

static inline double tl_ufunc_scalar_as_double(tl_scalar s) {
    return s.kind == TL_SCALAR_DOUBLE || s.kind == TL_SCALAR_COMPLEX ? s.d : (double)s.i;
}
static inline int64_t tl_ufunc_scalar_as_int(tl_scalar s) {
    if (s.kind != TL_SCALAR_DOUBLE && s.kind != TL_SCALAR_COMPLEX) return s.i;
    double d = s.d;   /* truncation toward zero; out-of-range values saturate, never UB */
    if (!(d > -9223372036854775808.0)) return d != d ? 0 : INT64_MIN;
    if (!(d < 9223372036854775808.0)) return INT64_MAX;
    return (int64_t)d;
}

/* s converted to the compute type of a loop over dtype dt (PyTorch's
 * Scalar::to<opmath_t>): integers wrap like C casts, bool is `!= 0` */
static inline tl_opmath tl_opmath_from_scalar(tl_scalar s, tl_dtype dt) {
    tl_opmath v;
    v.i64 = 0;
    switch (dt) {
    case TL_BOOL: v.b = s.kind == TL_SCALAR_DOUBLE ? s.d != 0 : s.i != 0; break;
    case TL_UINT8: v.u8 = (uint8_t)tl_ufunc_scalar_as_int(s); break;
    case TL_INT8: v.i8 = (int8_t)tl_ufunc_scalar_as_int(s); break;
    case TL_INT16: v.i16 = (int16_t)tl_ufunc_scalar_as_int(s); break;
    case TL_INT32: v.i32 = (int32_t)tl_ufunc_scalar_as_int(s); break;
    case TL_INT64: v.i64 = tl_ufunc_scalar_as_int(s); break;
    case TL_FLOAT16: case TL_BFLOAT16: case TL_FLOAT32: v.f32 = (float)tl_ufunc_scalar_as_double(s); break;
    case TL_FLOAT64: v.f64 = tl_ufunc_scalar_as_double(s); break;
    /* complex loops take real scalar arguments (tl_ufunc_scalar_check refuses others) */
    case TL_COMPLEX64: v.f32 = (float)tl_ufunc_scalar_as_double(s); break;
    case TL_COMPLEX128: v.f64 = tl_ufunc_scalar_as_double(s); break;
    default: break;
    }
    return v;
}

/* PyTorch's Scalar::to<scalar_t> check (c10::checked_convert): 0, or -1 with
 * "value cannot be converted to type int8_t without overflow" when s does
 * not fit dtype dt. Integers into unsigned types may wrap from negatives down
 * to -max (uint8: -255..255); infinities fit floating types, NaN only those;
 * bools always fit. */
static inline int tl_ufunc_scalar_check(tl_scalar s, tl_dtype dt) {
    double lo, hi;
    const char *name;
    switch (dt) {
    case TL_BOOL: lo = 0, hi = 1, name = "bool"; break;
    case TL_UINT8: lo = -255, hi = 255, name = "uint8_t"; break;
    case TL_INT8: lo = -128, hi = 127, name = "int8_t"; break;
    case TL_INT16: lo = -32768, hi = 32767, name = "int16_t"; break;
    case TL_INT32: lo = -2147483648.0, hi = 2147483647.0, name = "int"; break;
    case TL_INT64: lo = -9223372036854775808.0, hi = 9223372036854775807.0, name = "int64_t"; break;
    case TL_FLOAT16: lo = -65504.0, hi = 65504.0, name = "c10::Half"; break;
    case TL_BFLOAT16: lo = -3.3895313892515355e38, hi = 3.3895313892515355e38, name = "c10::BFloat16"; break;
    case TL_FLOAT32: lo = -3.4028234663852886e38, hi = 3.4028234663852886e38, name = "float"; break;
    case TL_COMPLEX64: case TL_COMPLEX128:
        if (s.kind == TL_SCALAR_COMPLEX && s.im != 0)
            return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "a complex scalar argument with a nonzero imaginary part "
                                                        "is not supported by torchlet's complex loops");
        return 0;
    default: return 0;
    }
    int bad;
    if (s.kind == TL_SCALAR_BOOL) {
        bad = 0;
    } else if (s.kind == TL_SCALAR_INT) {
        /* exact in int64 for the integer limits; doubles are fine for floats */
        bad = dt == TL_UINT8 ? (s.i > 255 || s.i < -255)
              : dt == TL_INT64 ? 0
              : ((double)s.i < lo || (double)s.i > hi);
    } else if (s.d != s.d) {
        bad = dt == TL_BOOL || tl_dtype_is_integral(dt, 0);
    } else if (s.d == 1.0 / 0.0 || s.d == -1.0 / 0.0) {
        bad = dt == TL_BOOL || tl_dtype_is_integral(dt, 0);
    } else {
        bad = dt == TL_INT64 ? (s.d < lo || s.d >= 9223372036854775808.0) : (s.d < lo || s.d > hi);
    }
    if (!bad) return 0;
    return tl_set_error(TL_ERR_RUNTIME, "value cannot be converted to type %s without overflow", name);
}

/* chunk of reduced-precision elements converted to float at a time */
#define TL_UFUNC_CHUNK 256

/* bulk bfloat16 <-> float32 (plain loops: GCC vectorizes both) */
static inline void tl_bf16_to_f32_n(float *restrict out, const uint16_t *restrict in, int64_t n) {
    for (int64_t i = 0; i < n; i++) out[i] = tl_f32_from_bits((uint32_t)in[i] << 16);
}
static inline void tl_f32_to_bf16_n(uint16_t *restrict out, const float *restrict in, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        uint32_t u = tl_f32_bits(in[i]);
        uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
        uint32_t q = (u >> 16) | 0x40u;
        out[i] = (uint16_t)(((u & 0x7fffffffu) > 0x7f800000u) ? q : r);
    }
}

/* ---- reductions: per-capability leaf sums (kernels/cpu/sum_kernel.c), used
 * by sum (kernels/native/reduce_ops.c): n contiguous elements of a floating
 * dtype summed in double (at most a few thousand per call; the caller sums
 * leaves pairwise) */
typedef double (*tl_sum_leaf_fn)(const void *p, int64_t n);
typedef tl_sum_leaf_fn tl_sum_leaf_table_t[TL_NUM_DTYPES];
extern const tl_sum_leaf_table_t tl_sum_leaf_table_DEFAULT, tl_sum_leaf_table_AVX2, tl_sum_leaf_table_AVX512;
extern tl_kernel_stub tl_sum_leaf_stub;
/* column sums: acc[k] += sum over `rows` rows (row stride rs elements) of
 * element k, n contiguous elements per row (acc: double for floating dtypes,
 * uint64 for integers and bool) */
typedef void (*tl_sum_cols_fn)(void *acc, const void *p, int64_t n, int64_t rows, int64_t rs);
typedef tl_sum_cols_fn tl_sum_cols_table_t[TL_NUM_DTYPES];
extern const tl_sum_cols_table_t tl_sum_cols_table_DEFAULT, tl_sum_cols_table_AVX2, tl_sum_cols_table_AVX512;
extern tl_kernel_stub tl_sum_cols_stub;

/* ---- mm: per-capability blocked kernels (kernels/cpu/mm_kernel.c) over
 * contiguous operands in the compute dtype (FLOAT32, FLOAT64, INT64 slots),
 * rows [i0, i1) of C */
typedef void (*tl_mm_gemm_fn)(int64_t i0, int64_t i1, int64_t N, int64_t K, const void *A, const void *B, void *C);
typedef tl_mm_gemm_fn tl_mm_gemm_table_t[TL_NUM_DTYPES];
extern const tl_mm_gemm_table_t tl_mm_gemm_table_DEFAULT, tl_mm_gemm_table_AVX2, tl_mm_gemm_table_AVX512;
extern tl_kernel_stub tl_mm_gemm_stub;

/* helpers formulas may use */
#define TL_UFUNC_MAX(a, b) ((a) > (b) ? (a) : (b))

#endif
