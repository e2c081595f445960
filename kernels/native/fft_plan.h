/* One-dimensional complex FFT of any length (fft_plan.c): mixed-radix
 * Stockham passes (radix 4, 2, 3, 5, and small odd primes by a direct DFT),
 * Bluestein's chirp-z through a 2^k transform for lengths with a prime factor
 * above TL_FFT_MAX_DIRECT_PRIME. Computes in double complex. */
#ifndef TL_FFT_PLAN_H
#define TL_FFT_PLAN_H

#include <complex.h>
#include <stdint.h>

#define TL_FFT_MAX_DIRECT_PRIME 31

typedef struct tl_fft_plan tl_fft_plan;

/* a plan for length n >= 1 from a small process-wide cache (new reference);
 * NULL with the error set when out of memory */
tl_fft_plan *tl_fft_plan_get(int64_t n);
void tl_fft_plan_release(tl_fft_plan *p);

/* scratch elements tl_fft_run needs for this plan */
int64_t tl_fft_plan_scratch(const tl_fft_plan *p);

/* in-place transform of x[0..n): forward uses exp(-2 pi i jk/n), backward
 * exp(+2 pi i jk/n), both unnormalised; work holds tl_fft_plan_scratch elements */
void tl_fft_run(const tl_fft_plan *p, double _Complex *x, double _Complex *work, int forward);

#endif
