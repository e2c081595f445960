/* Fallbacks for a build without the CUDA runtime (runtime/src/cuda/): weak,
 * so the runtime's definitions replace them at link time. A launch then
 * fails with a RuntimeError instead of an unresolved symbol. */
#include "tl_cuda.h"
#include "tl_error.h"

__attribute__((weak)) int tl_cuda_launch(tl_cuda_function *f, const unsigned grid[3], const unsigned block[3],
                                         unsigned shared_bytes, void **args) {
    (void)grid, (void)block, (void)shared_bytes, (void)args;
    return tl_set_error(TL_ERR_RUNTIME, "cannot launch %s: this torchlet build has no CUDA runtime",
                        f && f->name ? f->name : "a CUDA kernel");
}
