/* Fill inner loops: data[0] = out, ctx points to the value already stored in
 * the out dtype. Compiled per CPU capability like copy_kernel.c. */
#include <stdint.h>
#include <string.h>

#include "tl_kernel.h"

#define TL_DEFINE_FILL(NAME, T)                                                               \
    static void TL_KNAME(fill_##NAME)(char **data, const int64_t *strides, int64_t n, void *ctx) { \
        const T v = *(const T *)ctx;                                                          \
        char *d = data[0];                                                                    \
        const int64_t ds = strides[0];                                                        \
        if (ds == (int64_t)sizeof(T)) {                                                       \
            T *restrict o = (T *)d;                                                           \
            for (int64_t k = 0; k < n; k++) o[k] = v;                                         \
        } else {                                                                              \
            for (int64_t k = 0; k < n; k++) *(T *)(d + k * ds) = v;                           \
        }                                                                                     \
    }

TL_DEFINE_FILL(1, uint8_t)
TL_DEFINE_FILL(2, uint16_t)
TL_DEFINE_FILL(4, uint32_t)
TL_DEFINE_FILL(8, uint64_t)
TL_DEFINE_FILL(16, double _Complex)

const tl_fill_table_t TL_KNAME(tl_fill_table) = {
    TL_KNAME(fill_1), TL_KNAME(fill_1), TL_KNAME(fill_1), TL_KNAME(fill_2), TL_KNAME(fill_4),
    TL_KNAME(fill_8), TL_KNAME(fill_2), TL_KNAME(fill_2), TL_KNAME(fill_4), TL_KNAME(fill_8),
    TL_KNAME(fill_8), TL_KNAME(fill_16),
};
