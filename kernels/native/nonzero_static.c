/* nonzero_static: nonzero's coordinates in a result of a fixed number of rows
 * (PyTorch's nonzero_static_out_cpu): the first `size` rows of nonzero, the
 * rows beyond the nonzero count filled with fill_value. */
#include <stdbool.h>

#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/copy.h"
#include "ops/full.h"
#include "ops/narrow.h"
#include "ops/nonzero.h"
#include "ops/nonzero_static.h"
#include "tl_structured.h"
#include "tl_tensor.h"

tl_tensor *tl_native_nonzero_static_cpu(tl_keyset ks, tl_tensor *self, int64_t size, int64_t fill_value) {
    (void)ks;
    if (size < 0) {
        tl_set_error(TL_ERR_RUNTIME, "nonzero_static: 'size' must be an non-negative integer, but got size: %lld",
                     (long long)size);
        return NULL;
    }
    const int64_t shape[2] = {size, self->ndim};
    tl_tensor *r = tl_ops_full(shape, 2, tl_scalar_from_int(fill_value), TL_INT64, -1, (int)tl__device_of(self),
                               false, false);
    tl_tensor *nz = r ? tl_ops_nonzero(self) : NULL;
    if (!nz) goto fail;
    const int64_t n = nz->sizes[0] < size ? nz->sizes[0] : size;
    if (n > 0) {
        tl_tensor *dst = tl_ops_narrow(r, 0, 0, n), *src = tl_ops_narrow(nz, 0, 0, n);
        tl_tensor *c = dst && src ? tl_ops_copy_(dst, src, false) : NULL;
        tl_tensor_release(dst);
        tl_tensor_release(src);
        if (!c) goto fail;
        tl_tensor_release(c);
    }
    tl_tensor_release(nz);
    return r;
fail:
    tl_tensor_release(nz);
    tl_tensor_release(r);
    return NULL;
}
