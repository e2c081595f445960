/* gelu_backward(approximate='tanh'), PyTorch's GeluBackwardKernelImpl formula:
 * with inner = b * (x + k x^3), t = tanh(inner), b = sqrt(2/pi), k = 0.044715:
 * grad * (0.5 * (1 + t) + 0.5 * x * (1 - t^2) * b * (1 + 3 k x^2)).
 *
 * ufunc_inner_loop: Generic: gelu_backward_tanh (Floating, BFloat16, Half)
 *
 * float loops: with E = e^(-2 inner) (TL_UEXP) and s = 1 / (1 + E) =
 * 0.5 (1 + t), 1 - s = E s and 1 - t^2 = 4 s (1 - s), so the result is
 * grad * (s + s 2 x (1 - s) b (1 + 3 k x^2)): one exp and a division
 * instead of a tanh, and no cancellation in 1 - t^2 for large |x|
 * (1 - s is 1 where E overflows). float64: PyTorch's form.
 */
#include "tl_umath.h"
static inline float tl_gelu_backward_tanh_f(float g, float x) {
    const float b = (float)(M_SQRT2 * M_2_SQRTPI * 0.5), k = 0.044715f;
    const float x2 = x * x, e = TL_UEXP(-2.0f * b * (x + k * x2 * x));
    const float s = 1.0f / (1.0f + e), oms = s == 0.0f ? 1.0f : e * s;
    return g * (s + s * (2.0f * x * oms * b * (1.0f + 3.0f * k * x2)));   /* s = 0: +0 as PyTorch's */
}
static inline double tl_gelu_backward_tanh_d(double g, double x) {
    const double b = M_SQRT2 * M_2_SQRTPI * 0.5, k = 0.044715;
    const double t = tanh(b * (x + k * x * x * x));
    return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * b * (1 + 3 * k * x * x));
}
#define TL_UFUNC_gelu_backward_tanh(grad_output, self)                                                 \
    _Generic((self), double: tl_gelu_backward_tanh_d, default: tl_gelu_backward_tanh_f)((grad_output), (self))
