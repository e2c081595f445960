/* Host stand-ins for device kernels, registered with the fake driver by the
 * tests (fake_register_kernel). Each takes the launch's grid, block and
 * kernelParams exactly as cuLaunchKernel received them and runs every
 * (block, thread) pair, as the device would. */
#include <stdint.h>

/* the parameter struct a generated launcher would pass as its one kernel parameter */
typedef struct {
    float *y;
    const float *x;
    float alpha;
    int64_t n;
} axpy_params;

/* y[i] = alpha * x[i] + y[i] for i < n; params[0] -> axpy_params */
void tl_test_axpy_f32(unsigned grid[3], unsigned block[3], void **params) {
    const axpy_params *p = (const axpy_params *)params[0];
    for (unsigned b = 0; b < grid[0]; b++)
        for (unsigned t = 0; t < block[0]; t++) {
            int64_t i = (int64_t)b * block[0] + t;
            if (i < p->n) p->y[i] = p->alpha * p->x[i] + p->y[i];
        }
}

/* three separate parameters: int32 n, double value, int64 *out; out[i] = value * i (as int64) */
void tl_test_iota_i64(unsigned grid[3], unsigned block[3], void **params) {
    int32_t n = *(const int32_t *)params[0];
    double v = *(const double *)params[1];
    int64_t *out = *(int64_t *const *)params[2];
    for (unsigned b = 0; b < grid[0]; b++)
        for (unsigned t = 0; t < block[0]; t++) {
            int64_t i = (int64_t)b * block[0] + t;
            if (i < n) out[i] = (int64_t)(v * (double)i);
        }
}
