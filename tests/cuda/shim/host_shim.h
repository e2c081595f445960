/* Host shim: forced-included (-include) before a generated CUDA program
 * compiled as C++17 on the CPU (tests/cuda/shim_build.py). CUDA's qualifiers
 * become nothing, the built-in index variables are thread-locals that the
 * shim launcher (shim_launch.cpp) sets for every block x thread before it
 * calls the kernel. Only for kernels without __syncthreads / shuffles /
 * shared memory: every generated pointwise kernel. */
#ifndef TL_CUDA_HOST_SHIM_H
#define TL_CUDA_HOST_SHIM_H
#define TL_CUDA_HOST_SHIM 1

#include <cmath>
#include <cstdint>
#include <cstring>
#include <math.h>

struct tl_shim_dim3 {
    unsigned x, y, z;
};
extern thread_local tl_shim_dim3 threadIdx, blockIdx, blockDim, gridDim;

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __restrict__ __restrict

/* registration of the program's kernels with the shim launcher */
typedef void (*tl_shim_kernel_fn)(const void *params);
extern "C" void tl_shim_register(const char *name, tl_shim_kernel_fn fn);
/* runs fn over grid x block, one simulated thread at a time */
extern "C" void tl_shim_run(tl_shim_kernel_fn fn, const unsigned grid[3], const unsigned block[3], const void *params);
/* a kernel as the fake libcuda calls it (tests/cuda/fake_driver/fake_cuda.c) */
typedef void (*tl_shim_fake_fn)(unsigned grid[3], unsigned block[3], void **params);

#endif
