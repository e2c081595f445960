/* torchlet runtime: the CUDA device guard (runtime/src/cuda/guard.c).
 *
 * PyTorch's OptionalDeviceGuard: a CUDA kernel runs on its inputs' device,
 * whatever device is current. Enter makes `device` this thread's current
 * device and remembers the one before; exit puts it back. C has no RAII: the
 * guard is a struct on the caller's stack, and every path out after a
 * successful enter calls exit.
 *
 *     tl_cuda_guard g;
 *     if (tl_cuda_guard_enter(&g, tl_cuda_device_of(self)) != 0) return NULL;
 *     tl_tensor *r = kernel(...);
 *     tl_cuda_guard_exit(&g);
 *
 * A device < 0 (a CPU or meta tensor, none given) and the current device
 * itself change nothing and call no driver function; a different device is
 * only recorded (its context is made current by the first driver call that
 * needs it, as after tl_cuda_set_device). */
#ifndef TL_CUDA_GUARD_H
#define TL_CUDA_GUARD_H

#include <stdint.h>
#include "tl_tensor.h"

typedef struct tl_cuda_guard {
    int prev;   /* the device to restore; -1: nothing was changed */
} tl_cuda_guard;

/* 0, or -1 with the error set ("CUDA error: invalid device ordinal", no driver) */
int tl_cuda_guard_enter(tl_cuda_guard *g, int device);
void tl_cuda_guard_exit(tl_cuda_guard *g);

/* PyTorch's device check of a CUDA kernel's tensor arguments (device_check:
 * ExactSame, the default): *first is the first defined tensor seen (NULL at
 * the start); a tensor on another device raises "Expected all tensors to be
 * on the same device, but found at least two devices, cuda:1 and cuda:0!".
 * Undefined (NULL) tensors are skipped. */
int tl_cuda_check_device(const tl_tensor **first, const tl_tensor *t);
int tl_cuda_check_device_list(const tl_tensor **first, tl_tensor *const *ts, int64_t n);

/* where a guard's device comes from; each -1 when there is no CUDA device */
int tl_cuda_device_of(const tl_tensor *t);                          /* NULL: -1 */
int tl_cuda_device_of_list(tl_tensor *const *ts, int64_t n);        /* the first defined CUDA element */
int tl_cuda_device_of_arg(int packed_device);                       /* a Device argument: its explicit cuda index */

#endif
