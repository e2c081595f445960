/* The dot product of two contiguous rows, shared by the per-ISA kernels that
 * need one (attention_kernel.c: the backward's D = rowsum(dO * O);
 * nn_kernel.c: softmax / log_softmax backward's sum(g * y)). 16 independent
 * partial sums so the loop vectorizes, combined pairwise, then the tail.
 * static inline: each including file compiles it for its own ISA. */
#ifndef TL_ROWDOT_H
#define TL_ROWDOT_H

#include <stdint.h>

enum { TL_ROWDOT_LANES = 16 };

#define TL_DEF_ROWDOT(NAME, T)                                                          \
    static inline T tl_rowdot_##NAME(const T *restrict x, const T *restrict y, int64_t n) { \
        T a[TL_ROWDOT_LANES] = {0};                                                     \
        int64_t k = 0;                                                                  \
        for (; k + TL_ROWDOT_LANES <= n; k += TL_ROWDOT_LANES)                          \
            for (int j = 0; j < TL_ROWDOT_LANES; j++) a[j] += x[k + j] * y[k + j];      \
        for (int w = TL_ROWDOT_LANES / 2; w > 0; w /= 2)                                \
            for (int j = 0; j < w; j++) a[j] += a[j + w];                               \
        T t = a[0];                                                                     \
        for (; k < n; k++) t += x[k] * y[k];                                            \
        return t;                                                                       \
    }
TL_DEF_ROWDOT(f32, float)
TL_DEF_ROWDOT(f64, double)
#undef TL_DEF_ROWDOT

#endif
