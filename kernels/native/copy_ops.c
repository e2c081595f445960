/* Copies and conversions (yaml/native_functions.yaml: contiguous, clone,
 * copy_, _to_copy, to.*, fill_.Scalar, zero_) over the runtime's copy engine
 * (runtime/src/copy.c). to() returns self itself when nothing changes, like
 * PyTorch, and otherwise calls _to_copy through the dispatcher. */
#include "tl_cuda.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/_to_copy.h"
#include "ops/clone.h"
#include "ops/contiguous.h"
#include "ops/copy.h"
#include "ops/empty_like.h"
#include "ops/fill.h"
#include "ops/to.h"
#include "ops/zero.h"

static tl_tensor *retained(tl_tensor *t) {
    tl_tensor_retain(t);
    return t;
}

tl_tensor *tl_native_contiguous(tl_keyset ks, tl_tensor *self, int memory_format) {
    (void)ks;
    if (memory_format == TL_PRESERVE_FORMAT) {
        tl_set_error(TL_ERR_RUNTIME, "preserve memory format is unsupported by the contiguous operator");
        return NULL;
    }
    if (memory_format > TL_PRESERVE_FORMAT) {
        tl_set_error(TL_ERR_NOT_IMPLEMENTED, "torchlet supports only torch.contiguous_format and torch.preserve_format");
        return NULL;
    }
    /* CompositeImplicitAutograd: self, or clone through the dispatcher (autograd records CloneBackward0) */
    if (tl_tensor_is_contiguous(self)) return retained(self);
    return tl_ops_clone(self, TL_CONTIGUOUS_FORMAT);
}

tl_tensor *tl_native_clone(tl_keyset ks, tl_tensor *self, int memory_format) {
    (void)ks;
    if (memory_format < 0 || memory_format == TL_PRESERVE_FORMAT) return tl_clone(self);
    if (memory_format != TL_CONTIGUOUS_FORMAT) {
        tl_set_error(TL_ERR_NOT_IMPLEMENTED, "torchlet supports only torch.contiguous_format and torch.preserve_format");
        return NULL;
    }
    tl_tensor *t = tl_empty(tl_tensor_ndim(self), tl_tensor_sizes(self), tl_tensor_dtype(self), tl__device_of(self));
    if (t && tl_copy_(t, self) != 0) {
        tl_tensor_release(t);
        return NULL;
    }
    return t;
}

tl_tensor *tl_native_copy_(tl_keyset ks, tl_tensor *self, tl_tensor *src, bool non_blocking) {
    (void)ks;
    (void)non_blocking;
    if (tl_tensor_device(src) == TL_META && tl_tensor_device(self) != TL_META) {
        tl_set_error(TL_ERR_NOT_IMPLEMENTED, "Cannot copy out of meta tensor; no data!");
        return NULL;
    }
    if (tl_copy_(self, src) != 0) return NULL;
    return retained(self);
}

tl_tensor *tl_native__to_copy(tl_keyset ks, tl_tensor *self, tl_dtype dtype, int layout, int device, bool pin_memory,
                              bool pin_memory_has, bool non_blocking, int memory_format) {
    (void)ks; (void)pin_memory; (void)pin_memory_has; (void)non_blocking;
    if (layout > 0) {
        tl_set_error(TL_ERR_NOT_IMPLEMENTED, "torchlet supports only the strided layout (torch.strided)");
        return NULL;
    }
    tl_device_type dev = device < 0 ? tl__device_of(self) : (tl_device_type)device;
    if (tl_tensor_device(self) == TL_META && dev != TL_META) {
        tl_set_error(TL_ERR_NOT_IMPLEMENTED, "Cannot copy out of meta tensor; no data!");
        return NULL;
    }
    tl_tensor *t = tl_ops_empty_like(self, dtype, -1, (int)dev, false, false, memory_format);
    if (t && tl_copy_(t, self) != 0) {
        tl_tensor_release(t);
        return NULL;
    }
    return t;
}

static tl_tensor *to_impl(tl_tensor *self, tl_dtype dtype, int device, bool non_blocking, bool copy,
                          int memory_format) {
    tl_dtype dt = dtype == TL_DTYPE_UNDEFINED ? tl_tensor_dtype(self) : dtype;
    int dev = device < 0 ? (int)tl__device_of(self) : device;
    if (tl__device_type_of(dev) == TL_CUDA && tl__device_index_of(dev) < 0)   /* "cuda": the current device */
        dev = tl__device_pack(TL_CUDA, tl_cuda_current_device());
    int keeps_format = memory_format < 0 || memory_format == TL_PRESERVE_FORMAT ||
                       (memory_format == TL_CONTIGUOUS_FORMAT && tl_tensor_is_contiguous(self));
    if (!copy && dt == tl_tensor_dtype(self) && dev == (int)tl__device_of(self) && keeps_format)
        return retained(self);
    return tl_ops__to_copy(self, dt, -1, dev, false, false, non_blocking, memory_format);
}

tl_tensor *tl_native_to_dtype_layout(tl_keyset ks, tl_tensor *self, tl_dtype dtype, int layout, int device,
                                     bool pin_memory, bool pin_memory_has, bool non_blocking, bool copy,
                                     int memory_format) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    if (layout > 0) {
        tl_set_error(TL_ERR_NOT_IMPLEMENTED, "torchlet supports only the strided layout (torch.strided)");
        return NULL;
    }
    return to_impl(self, dtype, device, non_blocking, copy, memory_format);
}

tl_tensor *tl_native_to_device(tl_keyset ks, tl_tensor *self, int device, tl_dtype dtype, bool non_blocking, bool copy,
                               int memory_format) {
    (void)ks;
    return to_impl(self, dtype, device, non_blocking, copy, memory_format);
}

tl_tensor *tl_native_to_dtype(tl_keyset ks, tl_tensor *self, tl_dtype dtype, bool non_blocking, bool copy,
                              int memory_format) {
    (void)ks;
    return to_impl(self, dtype, -1, non_blocking, copy, memory_format);
}

tl_tensor *tl_native_to_other(tl_keyset ks, tl_tensor *self, tl_tensor *other, bool non_blocking, bool copy,
                              int memory_format) {
    (void)ks;
    return to_impl(self, tl_tensor_dtype(other), (int)tl__device_of(other), non_blocking, copy, memory_format);
}

tl_tensor *tl_native_fill_(tl_keyset ks, tl_tensor *self, tl_scalar value) {
    (void)ks;
    if (tl_fill_(self, value) != 0) return NULL;
    return retained(self);
}

tl_tensor *tl_native_zero_(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    if (tl_zero_(self) != 0) return NULL;
    return retained(self);
}
