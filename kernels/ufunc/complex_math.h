/* The complex loops of the transcendental ufuncs (complex64 / complex128),
 * each as PyTorch's CPU kernel computes it: C99's cexp / clog / csqrt / csin
 * ... (glibc's, which std::exp etc. of std::complex call) where PyTorch maps
 * std:: over the elements; reciprocal as c10::complex's scaled division 1 / z
 * (1 / 0 is inf + NaN i, 1 / inf 0, as there); rsqrt and sigmoid composed
 * from those as its Vectorized rsqrt() / sigmoid lambda; sgn z / |z| (0 at 0);
 * log1p / expm1 as c10::complex's; pow below.
 * ufunc_complex: yes (named for the complex dtypes only in ufunc_inner_loop) */
#include <complex.h>
#include <math.h>

#define TL_UCMATH(fn, x) _Generic((x), float _Complex: c##fn##f, default: c##fn)(x)
#define TL_UC_RECIP(x) (_Generic((x), float _Complex: tl_uc_recipf, default: tl_uc_recip)(x))

/* 1 / z as c10::complex's operator/ (numpy's scaled division) */
#define TL_UC_RECIP_BODY(T, ABS, MK)                                                  \
    const T c = ABS(re), d = ABS(im);                                                 \
    if (c >= d) {                                                                     \
        if (c == 0 && d == 0) return MK(1 / c, 0 / d);                                \
        const T rat = im / re, scl = 1 / (re + im * rat);                             \
        return MK(scl, (0 - rat) * scl);                                              \
    }                                                                                 \
    const T rat = re / im, scl = 1 / (im + re * rat);                                 \
    return MK(rat * scl, (0 * rat - 1) * scl);
static inline float _Complex tl_uc_recipf(float _Complex z) {
    const float re = crealf(z), im = cimagf(z);
    TL_UC_RECIP_BODY(float, fabsf, CMPLXF)
}
static inline double _Complex tl_uc_recip(double _Complex z) {
    const double re = creal(z), im = cimag(z);
    TL_UC_RECIP_BODY(double, fabs, CMPLX)
}
static inline float _Complex tl_uc_sgnf(float _Complex z) {
    const float a = cabsf(z);
    return a == 0 ? 0 : CMPLXF(crealf(z) / a, cimagf(z) / a);
}
static inline double _Complex tl_uc_sgn(double _Complex z) {
    const double a = cabs(z);
    return a == 0 ? 0 : CMPLX(creal(z) / a, cimag(z) / a);
}

/* x * y as c10::complex's operator* (no inf / NaN recovery, unlike C99's) */
#define TL_UC_MUL(x, y) (_Generic((x), float _Complex: tl_uc_mulf, default: tl_uc_mul)((x), (y)))
static inline float _Complex tl_uc_mulf(float _Complex x, float _Complex y) {
    return CMPLXF(crealf(x) * crealf(y) - cimagf(x) * cimagf(y), crealf(x) * cimagf(y) + cimagf(x) * crealf(y));
}
static inline double _Complex tl_uc_mul(double _Complex x, double _Complex y) {
    return CMPLX(creal(x) * creal(y) - cimag(x) * cimag(y), creal(x) * cimag(y) + cimag(x) * creal(y));
}

#define TL_UFUNC_exp_complex(self) (TL_UCMATH(exp, self))
#define TL_UFUNC_log_complex(self) (TL_UCMATH(log, self))
#define TL_UFUNC_sqrt_complex(self) (TL_UCMATH(sqrt, self))
#define TL_UFUNC_sin_complex(self) (TL_UCMATH(sin, self))
#define TL_UFUNC_cos_complex(self) (TL_UCMATH(cos, self))
#define TL_UFUNC_tan_complex(self) (TL_UCMATH(tan, self))
#define TL_UFUNC_sinh_complex(self) (TL_UCMATH(sinh, self))
#define TL_UFUNC_cosh_complex(self) (TL_UCMATH(cosh, self))
#define TL_UFUNC_tanh_complex(self) (TL_UCMATH(tanh, self))
#define TL_UFUNC_reciprocal_complex(self) (TL_UC_RECIP(self))
#define TL_UFUNC_rsqrt_complex(self) (TL_UC_RECIP(TL_UCMATH(sqrt, self)))
#define TL_UFUNC_sigmoid_complex(self) (TL_UC_RECIP(1 + TL_UCMATH(exp, -(self))))
/* log1p / expm1: c10::complex's (c10/util/complex_math.h), accurate near 0 */
static inline float _Complex tl_uc_log1pf(float _Complex z) {
    const float x = crealf(z), y = cimagf(z), theta = atan2f(y, x + 1);
    if (cabsf(z) < 0.5f) {
        const float r = x * (2 + x) + y * y;
        return r == 0 ? CMPLXF(x, theta) : CMPLXF(0.5f * log1pf(r), theta);
    }
    return CMPLXF(logf(hypotf(x + 1, y)), theta);
}
static inline double _Complex tl_uc_log1p(double _Complex z) {
    const double x = creal(z), y = cimag(z), theta = atan2(y, x + 1);
    if (cabs(z) < 0.5) {
        const double r = x * (2 + x) + y * y;
        return r == 0 ? CMPLX(x, theta) : CMPLX(0.5 * log1p(r), theta);
    }
    return CMPLX(log(hypot(x + 1, y)), theta);
}
static inline float _Complex tl_uc_expm1f(float _Complex z) {
    const float x = crealf(z), y = cimagf(z), a = sinf(y / 2);
    return CMPLXF(expm1f(x) * cosf(y) - 2 * a * a, expf(x) * sinf(y));
}
static inline double _Complex tl_uc_expm1(double _Complex z) {
    const double x = creal(z), y = cimag(z), a = sin(y / 2);
    return CMPLX(expm1(x) * cos(y) - 2 * a * a, exp(x) * sin(y));
}
#define TL_UFUNC_log1p_complex(self) (_Generic((self), float _Complex: tl_uc_log1pf, default: tl_uc_log1p)(self))
#define TL_UFUNC_expm1_complex(self) (_Generic((self), float _Complex: tl_uc_expm1f, default: tl_uc_expm1)(self))

/* pow: std::pow of std::complex is C99's cpow; the exponent 2, 3, -2 fast
 * paths of pow.Tensor_Scalar (pow_2.h, pow_3.h, pow_m2.h) as PyTorch's */
#define TL_UFUNC_pow_complex(self, exponent) (_Generic((self), float _Complex: cpowf, default: cpow)((self), (exponent)))
#define TL_UFUNC_pow_2_complex(self) (TL_UC_MUL(self, self))
#define TL_UFUNC_pow_3_complex(self) (TL_UC_MUL(TL_UC_MUL(self, self), self))
#define TL_UFUNC_pow_m2_complex(self) (TL_UC_RECIP(TL_UC_MUL(self, self)))
#define TL_UFUNC_sgn_complex(self) (_Generic((self), float _Complex: tl_uc_sgnf, default: tl_uc_sgn)(self))
