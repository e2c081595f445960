/* gelu(approximate='tanh'): 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))).
 *
 * ufunc_inner_loop: Generic: gelu_tanh (Floating, BFloat16, Half)
 *
 * float loops: 0.5 (1 + tanh(y)) = 1 / (1 + e^(-2y)), so the result is
 * x / (1 + e^(-2y)), one exp (TL_UEXP) and a division instead of a tanh
 * call: 1.2x (AVX-512) to 2.2x (AVX2) the tanh form, and free of the
 * cancellation in 1 + tanh(y) for negative y (PyTorch's float results there
 * are off by up to an ulp of 1 times |x|). The ends as PyTorch's: -inf gives
 * NaN, +inf inf, very negative x -0 (e^(-2y) = inf). float64: PyTorch's form.
 */
#include "tl_umath.h"
static inline float tl_gelu_tanh_f(float x) {
    const float y = (float)(M_SQRT2 * M_2_SQRTPI * 0.5) * (x + 0.044715f * x * x * x);
    return x / (1.0f + TL_UEXP(-2.0f * y));
}
static inline double tl_gelu_tanh_d(double x) {
    return 0.5 * x * (1 + tanh(M_SQRT2 * M_2_SQRTPI * 0.5 * (x + 0.044715 * x * x * x)));
}
#define TL_UFUNC_gelu_tanh(self) _Generic((self), double: tl_gelu_tanh_d, default: tl_gelu_tanh_f)(self)
