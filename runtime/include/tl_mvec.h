/* Vector math from glibc's libmvec, through the compiler (internal).
 *
 * glibc's <math.h> declares the SIMD variants of its math functions only under
 * -ffast-math, which kernels must not use (it changes NaN/inf semantics). This
 * header re-declares them with GCC's simd attribute, so loops calling expf,
 * sin, pow, ... vectorize into calls to libmvec's _ZGV{b,c,d,e}N<lanes>v_*
 * (SSE, AVX, AVX2, AVX-512 ABIs: whichever the kernel variant is compiled
 * for). Needs -fno-math-errno (setup.py passes it) and linking -lmvec. The
 * list is what glibc 2.36's libmvec exports for all four ABIs.
 * Include it in kernel sources after <math.h>.
 */
#ifndef TL_MVEC_H
#define TL_MVEC_H

#include <math.h>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__FAST_MATH__) && \
    !defined(TL_NO_MVEC)
#define TL_MVEC __attribute__((simd("notinbranch")))
TL_MVEC double acos(double);
TL_MVEC float acosf(float);
TL_MVEC double acosh(double);
TL_MVEC float acoshf(float);
TL_MVEC double asin(double);
TL_MVEC float asinf(float);
TL_MVEC double asinh(double);
TL_MVEC float asinhf(float);
TL_MVEC double atan(double);
TL_MVEC float atanf(float);
TL_MVEC double atanh(double);
TL_MVEC float atanhf(float);
TL_MVEC double cbrt(double);
TL_MVEC float cbrtf(float);
TL_MVEC double cos(double);
TL_MVEC float cosf(float);
TL_MVEC double cosh(double);
TL_MVEC float coshf(float);
TL_MVEC double erf(double);
TL_MVEC float erff(float);
TL_MVEC double erfc(double);
TL_MVEC float erfcf(float);
TL_MVEC double exp(double);
TL_MVEC float expf(float);
TL_MVEC double exp10(double);
TL_MVEC float exp10f(float);
TL_MVEC double exp2(double);
TL_MVEC float exp2f(float);
TL_MVEC double expm1(double);
TL_MVEC float expm1f(float);
TL_MVEC double log(double);
TL_MVEC float logf(float);
TL_MVEC double log10(double);
TL_MVEC float log10f(float);
TL_MVEC double log1p(double);
TL_MVEC float log1pf(float);
TL_MVEC double log2(double);
TL_MVEC float log2f(float);
TL_MVEC double sin(double);
TL_MVEC float sinf(float);
TL_MVEC double sinh(double);
TL_MVEC float sinhf(float);
TL_MVEC double tan(double);
TL_MVEC float tanf(float);
TL_MVEC double tanh(double);
TL_MVEC float tanhf(float);
TL_MVEC double atan2(double, double);
TL_MVEC float atan2f(float, float);
TL_MVEC double hypot(double, double);
TL_MVEC float hypotf(float, float);
TL_MVEC double pow(double, double);
TL_MVEC float powf(float, float);
#undef TL_MVEC
#endif

#endif
