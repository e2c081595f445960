/* Copy / cast inner loops: any dtype to any dtype, any strides.
 *
 * Compiled three times (CPU_CAPABILITY = DEFAULT, AVX2, AVX512, see
 * setup.py); each compilation defines tl_copy_table_<CAP>[dst][src]. The loops
 * follow the TensorIterator convention: data[0] = dst, data[1] = src, byte
 * strides, n elements. Contiguous and broadcast-scalar cases run on plain
 * typed pointers so GCC vectorizes them for the variant's instruction set.
 */
#include <stdint.h>
#include <string.h>

#include "tl_half.h"
#include "tl_kernel.h"
#include "tl_cast.h"
#include "tl_ustream.h"

/* ---- one loop per (dst, src) pair */
#define TL_DEFINE_COPY(DN, DT, SN, ST)                                                        \
    __attribute__((unused)) static void TL_KNAME(copy_##DN##_##SN)(char **data, const int64_t *strides, int64_t n,   \
                                           void *ctx) {                                       \
        (void)ctx;                                                                            \
        char *d = data[0];                                                                    \
        const char *s = data[1];                                                              \
        const int64_t ds = strides[0], ss = strides[1];                                       \
        if (ds == (int64_t)sizeof(DT) && ss == (int64_t)sizeof(ST)) {                          \
            DT *restrict o = (DT *)d;                                                         \
            const ST *restrict in = (const ST *)s;                                            \
            for (int64_t k = 0; k < n; k++) o[k] = TL_CAST_##DN(TL_LOAD_##SN(in[k]));         \
        } else if (ds == (int64_t)sizeof(DT) && ss == 0) {                                     \
            DT *restrict o = (DT *)d;                                                         \
            const DT v = TL_CAST_##DN(TL_LOAD_##SN(*(const ST *)s));                          \
            for (int64_t k = 0; k < n; k++) o[k] = v;                                         \
        } else {                                                                              \
            for (int64_t k = 0; k < n; k++)                                                   \
                *(DT *)(d + k * ds) = TL_CAST_##DN(TL_LOAD_##SN(*(const ST *)(s + k * ss)));  \
        }                                                                                     \
    }

/* same dtype: raw moves by element size. Runs of the store policy's
 * copy_stream_min_bytes and more (tl_thresholds.h) are written with non-temporal
 * stores (kernels/ufunc/tl_ustream.h); below that memcpy wins. */
#define TL_DEFINE_MOVE(NAME, T)                                                               \
    static void TL_KNAME(move_##NAME)(char **data, const int64_t *strides, int64_t n, void *ctx) { \
        (void)ctx;                                                                            \
        char *d = data[0];                                                                    \
        const char *s = data[1];                                                              \
        const int64_t ds = strides[0], ss = strides[1];                                       \
        if (ds == (int64_t)sizeof(T) && ss == (int64_t)sizeof(T)) {                            \
            if (n * (int64_t)sizeof(T) >= tl_cpu_store_policy.copy_stream_min_bytes) {           \
                tl_ustream_copy(d, s, n * (int64_t)sizeof(T));                                \
                tl_ustream_fence();                                                           \
            } else {                                                                          \
                memcpy(d, s, (size_t)n * sizeof(T));                                          \
            }                                                                                 \
        } else if (ds == (int64_t)sizeof(T) && ss == 0) {                                      \
            T *restrict o = (T *)d;                                                           \
            const T v = *(const T *)s;                                                        \
            for (int64_t k = 0; k < n; k++) o[k] = v;                                         \
        } else if (ds == (int64_t)sizeof(T)) {                                                 \
            T *restrict o = (T *)d;                                                           \
            for (int64_t k = 0; k < n; k++) o[k] = *(const T *)(s + k * ss);                  \
        } else {                                                                              \
            for (int64_t k = 0; k < n; k++) *(T *)(d + k * ds) = *(const T *)(s + k * ss);    \
        }                                                                                     \
    }

TL_DEFINE_MOVE(1, uint8_t)
TL_DEFINE_MOVE(2, uint16_t)
TL_DEFINE_MOVE(4, uint32_t)
TL_DEFINE_MOVE(8, uint64_t)
TL_DEFINE_MOVE(16, double _Complex)

/* X-macro over the dtypes: (short name, C storage type) */
#define TL_COPY_SRCS(X, DN, DT)                                                               \
    X(DN, DT, b, uint8_t) X(DN, DT, u8, uint8_t) X(DN, DT, i8, int8_t) X(DN, DT, i16, int16_t) \
    X(DN, DT, i32, int32_t) X(DN, DT, i64, int64_t) X(DN, DT, f16, uint16_t)                  \
    X(DN, DT, bf16, uint16_t) X(DN, DT, f32, float) X(DN, DT, f64, double)                     \
    X(DN, DT, c64, float _Complex) X(DN, DT, c128, double _Complex)

#define TL_COPY_ALL(X)                                                                        \
    TL_COPY_SRCS(X, b, uint8_t) TL_COPY_SRCS(X, u8, uint8_t) TL_COPY_SRCS(X, i8, int8_t)       \
    TL_COPY_SRCS(X, i16, int16_t) TL_COPY_SRCS(X, i32, int32_t) TL_COPY_SRCS(X, i64, int64_t)  \
    TL_COPY_SRCS(X, f16, uint16_t) TL_COPY_SRCS(X, bf16, uint16_t) TL_COPY_SRCS(X, f32, float) \
    TL_COPY_SRCS(X, f64, double) TL_COPY_SRCS(X, c64, float _Complex)                         \
    TL_COPY_SRCS(X, c128, double _Complex)

TL_COPY_ALL(TL_DEFINE_COPY)

/* float16 <-> float32 contiguous runs use the hardware conversions in bulk
 * (GCC does not vectorize _Float16 casts without AVX512-FP16) */
static void TL_KNAME(cvt_f16_f32)(char **data, const int64_t *strides, int64_t n, void *ctx) {
    if (strides[0] == 2 && strides[1] == 4) {
        tl_f32_to_f16_n((uint16_t *)data[0], (const float *)data[1], n);
        return;
    }
    TL_KNAME(copy_f16_f32)(data, strides, n, ctx);
}
static void TL_KNAME(cvt_f32_f16)(char **data, const int64_t *strides, int64_t n, void *ctx) {
    if (strides[0] == 4 && strides[1] == 2) {
        tl_f16_to_f32_n((float *)data[0], (const uint16_t *)data[1], n);
        return;
    }
    TL_KNAME(copy_f32_f16)(data, strides, n, ctx);
}

/* table[dst][src]; same-dtype entries are raw moves (bool too: bytes are 0/1) */
const tl_copy_table_t TL_KNAME(tl_copy_table) = {
    {TL_KNAME(move_1), TL_KNAME(copy_b_u8), TL_KNAME(copy_b_i8), TL_KNAME(copy_b_i16), TL_KNAME(copy_b_i32),
     TL_KNAME(copy_b_i64), TL_KNAME(copy_b_f16), TL_KNAME(copy_b_bf16), TL_KNAME(copy_b_f32),
     TL_KNAME(copy_b_f64),
     TL_KNAME(copy_b_c64), TL_KNAME(copy_b_c128)},
    {TL_KNAME(copy_u8_b), TL_KNAME(move_1), TL_KNAME(copy_u8_i8), TL_KNAME(copy_u8_i16), TL_KNAME(copy_u8_i32),
     TL_KNAME(copy_u8_i64), TL_KNAME(copy_u8_f16), TL_KNAME(copy_u8_bf16), TL_KNAME(copy_u8_f32),
     TL_KNAME(copy_u8_f64),
     TL_KNAME(copy_u8_c64), TL_KNAME(copy_u8_c128)},
    {TL_KNAME(copy_i8_b), TL_KNAME(copy_i8_u8), TL_KNAME(move_1), TL_KNAME(copy_i8_i16), TL_KNAME(copy_i8_i32),
     TL_KNAME(copy_i8_i64), TL_KNAME(copy_i8_f16), TL_KNAME(copy_i8_bf16), TL_KNAME(copy_i8_f32),
     TL_KNAME(copy_i8_f64),
     TL_KNAME(copy_i8_c64), TL_KNAME(copy_i8_c128)},
    {TL_KNAME(copy_i16_b), TL_KNAME(copy_i16_u8), TL_KNAME(copy_i16_i8), TL_KNAME(move_2),
     TL_KNAME(copy_i16_i32), TL_KNAME(copy_i16_i64), TL_KNAME(copy_i16_f16), TL_KNAME(copy_i16_bf16),
     TL_KNAME(copy_i16_f32), TL_KNAME(copy_i16_f64),
     TL_KNAME(copy_i16_c64), TL_KNAME(copy_i16_c128)},
    {TL_KNAME(copy_i32_b), TL_KNAME(copy_i32_u8), TL_KNAME(copy_i32_i8), TL_KNAME(copy_i32_i16),
     TL_KNAME(move_4), TL_KNAME(copy_i32_i64), TL_KNAME(copy_i32_f16), TL_KNAME(copy_i32_bf16),
     TL_KNAME(copy_i32_f32), TL_KNAME(copy_i32_f64),
     TL_KNAME(copy_i32_c64), TL_KNAME(copy_i32_c128)},
    {TL_KNAME(copy_i64_b), TL_KNAME(copy_i64_u8), TL_KNAME(copy_i64_i8), TL_KNAME(copy_i64_i16),
     TL_KNAME(copy_i64_i32), TL_KNAME(move_8), TL_KNAME(copy_i64_f16), TL_KNAME(copy_i64_bf16),
     TL_KNAME(copy_i64_f32), TL_KNAME(copy_i64_f64),
     TL_KNAME(copy_i64_c64), TL_KNAME(copy_i64_c128)},
    {TL_KNAME(copy_f16_b), TL_KNAME(copy_f16_u8), TL_KNAME(copy_f16_i8), TL_KNAME(copy_f16_i16),
     TL_KNAME(copy_f16_i32), TL_KNAME(copy_f16_i64), TL_KNAME(move_2), TL_KNAME(copy_f16_bf16),
     TL_KNAME(cvt_f16_f32), TL_KNAME(copy_f16_f64),
     TL_KNAME(copy_f16_c64), TL_KNAME(copy_f16_c128)},
    {TL_KNAME(copy_bf16_b), TL_KNAME(copy_bf16_u8), TL_KNAME(copy_bf16_i8), TL_KNAME(copy_bf16_i16),
     TL_KNAME(copy_bf16_i32), TL_KNAME(copy_bf16_i64), TL_KNAME(copy_bf16_f16), TL_KNAME(move_2),
     TL_KNAME(copy_bf16_f32), TL_KNAME(copy_bf16_f64),
     TL_KNAME(copy_bf16_c64), TL_KNAME(copy_bf16_c128)},
    {TL_KNAME(copy_f32_b), TL_KNAME(copy_f32_u8), TL_KNAME(copy_f32_i8), TL_KNAME(copy_f32_i16),
     TL_KNAME(copy_f32_i32), TL_KNAME(copy_f32_i64), TL_KNAME(cvt_f32_f16), TL_KNAME(copy_f32_bf16),
     TL_KNAME(move_4), TL_KNAME(copy_f32_f64),
     TL_KNAME(copy_f32_c64), TL_KNAME(copy_f32_c128)},
    {TL_KNAME(copy_f64_b), TL_KNAME(copy_f64_u8), TL_KNAME(copy_f64_i8), TL_KNAME(copy_f64_i16),
     TL_KNAME(copy_f64_i32), TL_KNAME(copy_f64_i64), TL_KNAME(copy_f64_f16), TL_KNAME(copy_f64_bf16),
     TL_KNAME(copy_f64_f32), TL_KNAME(move_8),
     TL_KNAME(copy_f64_c64), TL_KNAME(copy_f64_c128)},
    {TL_KNAME(copy_c64_b), TL_KNAME(copy_c64_u8), TL_KNAME(copy_c64_i8), TL_KNAME(copy_c64_i16),
     TL_KNAME(copy_c64_i32), TL_KNAME(copy_c64_i64), TL_KNAME(copy_c64_f16), TL_KNAME(copy_c64_bf16),
     TL_KNAME(copy_c64_f32), TL_KNAME(copy_c64_f64), TL_KNAME(move_8), TL_KNAME(copy_c64_c128)},
    {TL_KNAME(copy_c128_b), TL_KNAME(copy_c128_u8), TL_KNAME(copy_c128_i8), TL_KNAME(copy_c128_i16),
     TL_KNAME(copy_c128_i32), TL_KNAME(copy_c128_i64), TL_KNAME(copy_c128_f16), TL_KNAME(copy_c128_bf16),
     TL_KNAME(copy_c128_f32), TL_KNAME(copy_c128_f64), TL_KNAME(copy_c128_c64), TL_KNAME(move_16)},
};
