/* Host shim: forced-included (-include) before a generated CUDA program
 * compiled as C++17 on the CPU (tests/cuda/shim_build.py). CUDA's qualifiers
 * become nothing, the built-in index variables are thread-locals that the
 * shim launcher (shim_launch.cpp) sets for every block x thread before it
 * calls the kernel. Pointwise kernels run one simulated thread after the
 * other (tl_shim_run); block-cooperative ones (the reductions: __shared__,
 * __syncthreads, warp shuffles) run each block's threads as fibers that
 * switch at every barrier (tl_shim_run_coop): __shared__ variables are
 * function statics (blocks run one after the other), a shuffle is a write,
 * a block barrier, a read of the neighbour's slot and a barrier, which is
 * exact for kernels whose threads all reach every shuffle and barrier. */
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

#define __shared__ static
/* a block barrier (fiber switch); nothing outside tl_shim_run_coop */
extern "C" void tl_shim_syncthreads(void);
#define __syncthreads() tl_shim_syncthreads()
/* the block's shuffle slots: TL_SHIM_MAX_THREADS x 16 bytes */
extern "C" void *tl_shim_exchange(void);
enum { TL_SHIM_MAX_THREADS = 1024 };
template <class T> static inline T __shfl_down_sync(unsigned, T v, unsigned delta, int = 32) {
    static_assert(sizeof(T) <= 16, "shuffle slot");
    T *slot = (T *)tl_shim_exchange();
    const unsigned t = threadIdx.x;
    slot[t] = v;
    tl_shim_syncthreads();
    const T r = ((t & 31u) + delta < 32u && t + delta < blockDim.x) ? slot[t + delta] : v;
    tl_shim_syncthreads();
    return r;
}

/* atomics: the simulated threads of a launch run one at a time on one host
 * thread (fibers switch only at barriers), so a plain read-modify-write is
 * atomic here */
template <class T> static inline T atomicAdd(T *p, T v) {
    const T old = *p;
    *p = (T)(old + v);
    return old;
}
template <class T> static inline T atomicCAS(T *p, T compare, T val) {
    const T old = *p;
    if (old == compare) *p = val;
    return old;
}

/* registration of the program's kernels with the shim launcher */
typedef void (*tl_shim_kernel_fn)(const void *params);
extern "C" void tl_shim_register(const char *name, tl_shim_kernel_fn fn);
/* runs fn over grid x block, one simulated thread at a time */
extern "C" void tl_shim_run(tl_shim_kernel_fn fn, const unsigned grid[3], const unsigned block[3], const void *params);
/* the same with each block's threads as fibers switching at barriers */
extern "C" void tl_shim_run_coop(tl_shim_kernel_fn fn, const unsigned grid[3], const unsigned block[3],
                                 const void *params);
extern "C" void tl_shim_register_coop(const char *name, tl_shim_kernel_fn fn);
/* a kernel as the fake libcuda calls it (tests/cuda/fake_driver/fake_cuda.c) */
typedef void (*tl_shim_fake_fn)(unsigned grid[3], unsigned block[3], void **params);

#endif
