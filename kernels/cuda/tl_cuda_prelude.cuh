/* torchlet CUDA prelude: what every generated program (generated/cuda/
 * ufunc_<op>.cu, reduce.cu, index.cu) starts with. A program includes it, and
 * NVRTC gets the text pasted in (one self-contained source, as PyTorch's
 * jiterator does; codegen/emit/cuda_program.py keeps it once for all
 * programs), followed by the formula headers of kernels/ufunc/ and the
 * kernels.
 *
 * No CUDA headers: fixed-width integers, half / bfloat16 conversions and the
 * math helpers the formulas use (tl_umath.h's macros, here with C++
 * overloads) are defined below. float16 converts through inline PTX on the
 * device; bfloat16 with the same bit arithmetic as the CPU (same rounding).
 *
 * TL_CUDA_HOST_SHIM: the same text compiled as C++ on the host
 * (tests/cuda/host_shim.h) to run the kernels on the CPU; then the shim
 * provides the integer types, <math.h> and threadIdx & co.
 */
#ifndef TL_CUDA_HOST_SHIM
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
#define INFINITY __int_as_float(0x7f800000)
#define NAN __int_as_float(0x7fffffff)
#define TL_CUDA_FORCEINLINE __forceinline__
#else
#define TL_CUDA_FORCEINLINE inline
#endif
#ifndef M_SQRT2
#define M_SQRT2 1.41421356237309504880
#define M_SQRT1_2 0.70710678118654752440
#define M_2_SQRTPI 1.12837916709551257390
#define M_PI 3.14159265358979323846
#endif

/* ---- type tests for the formulas' _Generic selections (the generator
 * rewrites `_Generic(x, float: f, default: g)(...)` into an if-constexpr over
 * these) */
template <class A, class B> struct tl_same_t { static constexpr bool value = false; };
template <class A> struct tl_same_t<A, A> { static constexpr bool value = true; };
/* the selection's type: of a copy of the expression (decltype may not see a
 * lambda before C++20, and formulas nest them); side-effect free formulas
 * make the copy free */
#define TL_IS(v, T) (tl_same_t<decltype(v), T>::value)

/* ---- bits, float16, bfloat16 (stored as uint16_t, computed in float) */
#ifdef TL_CUDA_HOST_SHIM
static inline uint32_t tl_f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float tl_f32_from_bits(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
#else
static TL_CUDA_FORCEINLINE uint32_t tl_f32_bits(float f) { return __float_as_uint(f); }
static TL_CUDA_FORCEINLINE float tl_f32_from_bits(uint32_t u) { return __uint_as_float(u); }
#endif
static TL_CUDA_FORCEINLINE float tl_bf16_to_f32(uint16_t h) { return tl_f32_from_bits((uint32_t)h << 16); }
static TL_CUDA_FORCEINLINE uint16_t tl_f32_to_bf16(float f) {
    uint32_t u = tl_f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);  /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}
#if defined(__CUDA_ARCH__)
static TL_CUDA_FORCEINLINE float tl_f16_to_f32(uint16_t h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}
static TL_CUDA_FORCEINLINE uint16_t tl_f32_to_f16(float f) {
    uint16_t h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}
#else /* host shim: the CPU backend's portable conversions (tl_half.h) */
static inline float tl_f16_to_f32(uint16_t h) {
    const uint32_t w = (uint32_t)h << 16, sign = w & 0x80000000u, two_w = w + w;
    const float normalized = tl_f32_from_bits((two_w >> 4) + (0xE0u << 23)) * 0x1.0p-112f;
    const float denormalized = tl_f32_from_bits((two_w >> 17) | (126u << 23)) - 0.5f;
    return tl_f32_from_bits(sign | (two_w < (1u << 27) ? tl_f32_bits(denormalized) : tl_f32_bits(normalized)));
}
static inline uint16_t tl_f32_to_f16(float f) {
    const uint32_t w = tl_f32_bits(f), shl1_w = w + w, sign = w & 0x80000000u;
    float base = (tl_f32_from_bits(w & 0x7fffffffu) * 0x1.0p+112f) * 0x1.0p-110f;
    uint32_t bias = shl1_w & 0xFF000000u;
    if (bias < 0x71000000u) bias = 0x71000000u;
    base = tl_f32_from_bits((bias >> 1) + 0x07800000u) + base;
    const uint32_t bits = tl_f32_bits(base);
    if (shl1_w > 0xFF000000u) return (uint16_t)((sign >> 16) | 0x7E00u | ((w >> 13) & 0x3FFu));
    return (uint16_t)((sign >> 16) | (((bits >> 13) & 0x00007C00u) + (bits & 0x00000FFFu)));
}
#endif

/* ---- tl_umath.h's macros for C++ (float picks the f-suffixed function,
 * anything else the double one, as the C _Generic does) */
#define TL_UMATH(fn, x)                                                                            \
    ([&]() {                                                                                       \
        auto tl_x_ = (x);                                                                          \
        if constexpr (tl_same_t<decltype(tl_x_), float>::value) return fn##f(tl_x_);              \
        else return fn((double)tl_x_);                                                             \
    }())
#define TL_UMATH2(fn, x, y)                                                                        \
    ([&]() {                                                                                       \
        auto tl_x_ = (x);                                                                          \
        if constexpr (tl_same_t<decltype(tl_x_), float>::value) return fn##f(tl_x_, (float)(y));   \
        else return fn((double)tl_x_, (double)(y));                                                \
    }())
/* the CPU's in-house float exp / erf / tanh (tl_vexp.h, tl_vtanh.h): CUDA's
 * own functions here (expf <= 2 ulp, erff / tanhf <= 2 ulp) */
static TL_CUDA_FORCEINLINE float tl_expf(float x) { return expf(x); }
static TL_CUDA_FORCEINLINE float tl_expf_ftz(float x) { return expf(x); }
static TL_CUDA_FORCEINLINE float tl_expf_sm(float x) { return expf(x); }
static TL_CUDA_FORCEINLINE float tl_erff(float x) { return erff(x); }
static TL_CUDA_FORCEINLINE float tl_tanhf(float x) { return tanhf(x); }
#define TL_UEXP(x) TL_UMATH(exp, x)
#define TL_UERF(x) TL_UMATH(erf, x)
#define TL_UTANH(x) TL_UMATH(tanh, x)
#define TL_UCONST(x, c)                                                                            \
    ([&]() {                                                                                       \
        auto tl_g_ = (x);                                                                          \
        (void)tl_g_;                                                                               \
        if constexpr (TL_IS(tl_g_, double)) return (double)(c);                                    \
        else return (float)(c);                                                                    \
    }())
#define TL_UMATH_INT(fn, x, int_expr)                                                              \
    ([&]() {                                                                                       \
        auto tl_g_ = (x);                                                                          \
        if constexpr (TL_IS(tl_g_, float)) return fn##f((float)tl_g_);                             \
        else if constexpr (TL_IS(tl_g_, double)) return fn((double)tl_g_);                         \
        else return (int_expr);                                                                    \
    }())
/* CUDA's fmod / pow are exact / libm-like for every input: no fallback */
#define TL_UMATH_FMOD(a, b) TL_UMATH2(fmod, a, b)
#define TL_UMATH_FMOD_SLOW(a, b) 0
#define TL_UMATH_POW(x, y) TL_UMATH2(pow, x, y)
#define TL_UMATH_TRUNC30(q) trunc(q)
static TL_CUDA_FORCEINLINE bool tl_umath_sign(bool x) { return x; }
static TL_CUDA_FORCEINLINE uint8_t tl_umath_sign(uint8_t x) { return x != 0; }
static TL_CUDA_FORCEINLINE float tl_umath_sign(float x) { return (float)((x > 0) - (x < 0)); }
static TL_CUDA_FORCEINLINE double tl_umath_sign(double x) { return (double)((x > 0) - (x < 0)); }
template <class T> static TL_CUDA_FORCEINLINE T tl_umath_sign(T x) { return (T)((x > 0) - (x < 0)); }
#define TL_UMATH_SIGN(x) tl_umath_sign(x)
#define TL_UFUNC_MAX(a, b) ((a) > (b) ? (a) : (b))

/* ---- the scalar arguments' compute values (tl_ufunc.h's tl_opmath) */
union tl_opmath {
    bool b;
    uint8_t u8;
    int8_t i8;
    int16_t i16;
    int32_t i32;
    int64_t i64;
    float f32;
    double f64;
};

/* ---- 128-bit (or narrower) vector access of VEC elements of T */
template <class T, int VEC> struct alignas(sizeof(T) * VEC) tl_vec {
    T v[VEC];
};

/* ---- strided offsets (PyTorch's OffsetCalculator with IntDivider): dim 0 is
 * the fastest; the host computed magic/shift per size (valid for dividends
 * below 2^31: the launcher splits every launch to 32-bit offsets) */
static TL_CUDA_FORCEINLINE uint32_t tl_cuda_umulhi(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__)
    return __umulhi(a, b);
#else
    return (uint32_t)(((uint64_t)a * b) >> 32);
#endif
}
template <int NOPS, class P>
static TL_CUDA_FORCEINLINE void tl_cuda_offsets(const P &p, uint32_t idx, int32_t (&off)[NOPS]) {
#pragma unroll
    for (int k = 0; k < NOPS; k++) off[k] = 0;
    /* not unrolled: 25 copies of the division per element cost NVRTC time
     * and instruction cache for the rare many-dim launch */
#pragma unroll 1
    for (int d = 0; d < TL_CUDA_MAX_DIMS; d++) {
        if (d == (int)p.ndim) break;
        const uint32_t q = (tl_cuda_umulhi(idx, p.div_magic[d]) + idx) >> p.div_shift[d];
        const uint32_t mod = idx - q * p.sizes[d];
        idx = q;
#pragma unroll
        for (int k = 0; k < NOPS; k++) off[k] += (int32_t)mod * p.strides[d][k];
    }
}

/* ---- dynamic casting (operands whose stored dtype is not the loop's):
 * tl_dtype codes, converted to / from the compute type T per element */
template <class T> static TL_CUDA_FORCEINLINE T tl_cuda_fetch(int dt, const char *p) {
    switch (dt) {
    case 0: return (T)(*(const uint8_t *)p != 0);
    case 1: return (T)*(const uint8_t *)p;
    case 2: return (T)*(const int8_t *)p;
    case 3: return (T)*(const int16_t *)p;
    case 4: return (T)*(const int32_t *)p;
    case 5: return (T)*(const int64_t *)p;
    case 6: return (T)tl_f16_to_f32(*(const uint16_t *)p);
    case 7: return (T)tl_bf16_to_f32(*(const uint16_t *)p);
    case 8: return (T)*(const float *)p;
    default: return (T)*(const double *)p;
    }
}
template <class T> static TL_CUDA_FORCEINLINE void tl_cuda_cast_store(int dt, char *p, T v) {
    switch (dt) {
    case 0: *(uint8_t *)p = (uint8_t)(v != 0); break;
    case 1: *(uint8_t *)p = (uint8_t)v; break;
    case 2: *(int8_t *)p = (int8_t)v; break;
    case 3: *(int16_t *)p = (int16_t)v; break;
    case 4: *(int32_t *)p = (int32_t)v; break;
    case 5: *(int64_t *)p = (int64_t)v; break;
    case 6: *(uint16_t *)p = tl_f32_to_f16((float)v); break;
    case 7: *(uint16_t *)p = tl_f32_to_bf16((float)v); break;
    case 8: *(float *)p = (float)v; break;
    default: *(double *)p = (double)v; break;
    }
}
