/* Shifts with PyTorch's out-of-range rules (BinaryOpsKernel.cpp lshift/rshift),
 * one inline function per integer compute type, picked by _Generic:
 *  - a shift count that is negative (read as the signed type) or >= the bit
 *    width gives 0 for <<, and for >> the sign fill (a >> (bits - 1)) of signed
 *    types, 0 for uint8;
 *  - << shifts the unsigned representation (no signed-overflow UB) and wraps. */
#ifndef TL_SHIFT_H
#define TL_SHIFT_H

#include <stdint.h>

#define TL__SHIFTS(SFX, T, UT, ST, SIGNED)                                                       \
    static inline T tl_lshift_##SFX(T a, T b) {                                                \
        if ((ST)b < 0 || b >= (T)(sizeof(T) * 8)) return 0;                                    \
        return (T)((UT)a << b);                                                                \
    }                                                                                          \
    static inline T tl_rshift_##SFX(T a, T b) {                                                \
        const T max_shift = (T)(sizeof(T) * 8 - (SIGNED));                                     \
        if ((ST)b < 0 || b >= max_shift) return (T)(a >> max_shift);                           \
        return (T)(a >> b);                                                                    \
    }
TL__SHIFTS(u8, uint8_t, uint8_t, int8_t, 0)
TL__SHIFTS(i8, int8_t, uint8_t, int8_t, 1)
TL__SHIFTS(i16, int16_t, uint16_t, int16_t, 1)
TL__SHIFTS(i32, int32_t, uint32_t, int32_t, 1)
TL__SHIFTS(i64, int64_t, uint64_t, int64_t, 1)
#undef TL__SHIFTS

#define TL_SHIFT(dir, a, b)                                                                    \
    _Generic((a), uint8_t: tl_##dir##_u8, int8_t: tl_##dir##_i8, int16_t: tl_##dir##_i16,      \
             int32_t: tl_##dir##_i32, default: tl_##dir##_i64)((a), (b))

#endif
