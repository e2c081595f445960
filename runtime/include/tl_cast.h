/* Element conversions used by copy/cast kernels (internal, header-only).
 *
 * TL_LOAD_<src>(raw) turns a stored element into its natural C value
 * (integers stay integers, float16/bfloat16 become float, float64 stays
 * double); TL_CAST_<dst>(v) turns any such value into dst's storage. The
 * conversion rules are PyTorch's / numpy's: to bool is `!= 0`, float to
 * integer truncates toward zero (through int64, so no undefined behaviour for
 * values in int64 range), and rounding to float16 / bfloat16 is to nearest even,
 * once from the source's exact value for float16 (numpy), through float32
 * for bfloat16 (ml_dtypes, PyTorch). complex64 / complex128 are C99's
 * float _Complex / double _Complex; to a real dtype they keep the real part.
 */
#ifndef TL_CAST_H
#define TL_CAST_H

#include <stdint.h>
#include "tl_half.h"

static inline int64_t tl_f32_to_i64(float x) {
    if (!(x > -9223372036854775808.0f && x < 9223372036854775808.0f)) return INT64_MIN;
    return (int64_t)x;
}
static inline int64_t tl_f64_to_i64(double x) {
    if (!(x >= -9223372036854775808.0 && x < 9223372036854775808.0)) return INT64_MIN;
    return (int64_t)x;
}

#define TL_LOAD_b(x) ((uint8_t)((x) != 0))
#define TL_LOAD_u8(x) (x)
#define TL_LOAD_i8(x) (x)
#define TL_LOAD_i16(x) (x)
#define TL_LOAD_i32(x) (x)
#define TL_LOAD_i64(x) (x)
#define TL_LOAD_f16(x) tl_f16_to_f32(x)
#define TL_LOAD_bf16(x) tl_bf16_to_f32(x)
#define TL_LOAD_f32(x) (x)
#define TL_LOAD_f64(x) (x)
#define TL_LOAD_c64(x) (x)
#define TL_LOAD_c128(x) (x)

/* complex sources keep their real part (PyTorch's complex -> real cast) */
#define TL__TO_I64(v) \
    _Generic((v), float: tl_f32_to_i64((float)(v)), double: tl_f64_to_i64((double)(v)), \
             float _Complex: tl_f32_to_i64(__real__(v)), double _Complex: tl_f64_to_i64(__real__(v)), \
             default: (int64_t)(v))

#define TL_CAST_b(v) ((uint8_t)((v) != 0))
#define TL_CAST_u8(v) ((uint8_t)TL__TO_I64(v))
#define TL_CAST_i8(v) ((int8_t)TL__TO_I64(v))
#define TL_CAST_i16(v) ((int16_t)TL__TO_I64(v))
#define TL_CAST_i32(v) ((int32_t)TL__TO_I64(v))
#define TL_CAST_i64(v) ((int64_t)TL__TO_I64(v))
#define TL_CAST_f16(v) \
    _Generic((v), double: tl_f64_to_f16((double)(v)), int64_t: tl_f64_to_f16((double)(v)), \
             double _Complex: tl_f64_to_f16(__real__(v)), default: tl_f32_to_f16((float)(v)))
/* bfloat16 rounds through float32 from every source, as ml_dtypes and PyTorch do */
#define TL_CAST_bf16(v) tl_f32_to_bf16((float)(v))
#define TL_CAST_f32(v) ((float)(v))
#define TL_CAST_f64(v) ((double)(v))
#define TL_CAST_c64(v) ((float _Complex)(v))
#define TL_CAST_c128(v) ((double _Complex)(v))

#endif
