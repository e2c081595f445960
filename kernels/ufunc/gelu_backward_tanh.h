/* gelu_backward(approximate='tanh'), PyTorch's GeluBackwardKernelImpl formula:
 * with inner = b * (x + k x^3), t = tanh(inner), b = sqrt(2/pi), k = 0.044715:
 * grad * (0.5 * (1 + t) + 0.5 * x * (1 - t^2) * b * (1 + 3 k x^2)).
 *
 * ufunc_inner_loop: Generic: gelu_backward_tanh (Floating, BFloat16, Half)
 */
#include "tl_umath.h"
#define TL__GELU_BT(T, SFX)                                                                            \
    static inline T tl_gelu_backward_tanh_##SFX(T g, T x) {                                            \
        const T b = (T)(M_SQRT2 * M_2_SQRTPI * 0.5), k = (T)0.044715;                                        \
        const T t = TL_UMATH(tanh, b * (x + k * x * x * x));                                           \
        return g * ((T)0.5 * (1 + t) + (T)0.5 * x * (1 - t * t) * b * (1 + 3 * k * x * x));           \
    }
TL__GELU_BT(float, f)
TL__GELU_BT(double, d)
#undef TL__GELU_BT
#define TL_UFUNC_gelu_backward_tanh(grad_output, self)                                                 \
    _Generic((self), double: tl_gelu_backward_tanh_d, default: tl_gelu_backward_tanh_f)((grad_output), (self))
