/* The CUDA device guard (tl_cuda_guard.h): the thread's current device set
 * for the extent of one kernel and restored after. Only the thread-local
 * device number changes; contexts follow lazily (tl__cu_ctx), so a guard on
 * the current device costs two compares and no driver call. */
#include "cuda_internal.h"
#include "tl_cuda_guard.h"
#include "tl_error.h"
#include "tl_internal.h"

int tl_cuda_guard_enter(tl_cuda_guard *g, int device) {
    g->prev = -1;
    if (device < 0 || device == tl__cu_t_device) return 0;
    if (tl__cu_check_device(device) != 0) return -1;
    g->prev = tl__cu_t_device;
    tl__cu_t_device = device;
    return 0;
}

void tl_cuda_guard_exit(tl_cuda_guard *g) {
    if (g->prev >= 0) tl__cu_t_device = g->prev;
    g->prev = -1;
}

int tl_cuda_device_of(const tl_tensor *t) {
    return t && t->device == TL_CUDA ? t->storage->device_index : -1;
}

int tl_cuda_device_of_list(tl_tensor *const *ts, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        if (ts[i] && ts[i]->device == TL_CUDA) return ts[i]->storage->device_index;
    return -1;
}

int tl_cuda_device_of_arg(int packed_device) {
    return tl__device_type_of(packed_device) == TL_CUDA ? tl__device_index_of(packed_device) : -1;
}

int tl_cuda_check_device(const tl_tensor **first, const tl_tensor *t) {
    if (!t) return 0;
    if (!*first) {
        *first = t;
        return 0;
    }
    if (tl__device_of(t) == tl__device_of(*first)) return 0;
    const char *a = tl__tensor_device_str(*first), *b = tl__tensor_device_str(t);
    return tl_set_error(TL_ERR_RUNTIME, "Expected all tensors to be on the same device, but found at least two "
                        "devices, %s and %s!", a, b);
}

int tl_cuda_check_device_list(const tl_tensor **first, tl_tensor *const *ts, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        if (tl_cuda_check_device(first, ts[i]) != 0) return -1;
    return 0;
}
