/* _unsafe_view (yaml/native_functions.yaml, PyTorch's schema): the view of a
 * tensor the caller has just made (reshape's copy, matmul's product) in the
 * final shape. PyTorch records UnsafeViewBackward0 for it instead of
 * ViewBackward0; the result is the same view as tl_native_view's. */
#include "missing_ops.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/_unsafe_view.h"
#include "ops/view.h"

tl_tensor *tl_native__unsafe_view(tl_keyset ks, tl_tensor *self, const int64_t *size, int64_t size_len) {
    (void)ks;
    return tl_view(self, size_len, size);
}

/* the autogen out= variant: the view copied into out, resized like resize_output */
tl_tensor *tl_native__unsafe_view_out(tl_keyset ks, tl_tensor *self, const int64_t *size, int64_t size_len,
                                      tl_tensor *out) {
    (void)ks;
    tl_tensor *r = tl_ops__unsafe_view(self, size, size_len);
    return r ? tl_missing_copy_to_out(r, out) : NULL;
}
