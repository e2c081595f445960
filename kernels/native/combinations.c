/* combinations: PyTorch's composition (aten/src/ATen/native/Itertools.cpp),
 * CompositeImplicitAutograd: an r-fold meshgrid of self, the positions with
 * i < j < k ... (i <= j <= ... with replacement) selected from each grid,
 * stacked as the columns of the result. PyTorch selects with masked_select;
 * torchlet indexes with the bool mask (the same elements, in the same order). */
#include <stdbool.h>
#include <stdlib.h>

#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/arange.h"
#include "ops/combinations.h"
#include "ops/empty.h"
#include "ops/full.h"
#include "ops/index.h"
#include "ops/le.h"
#include "ops/logical_and.h"
#include "ops/lt.h"
#include "ops/meshgrid.h"
#include "ops/stack.h"
#include "tl_structured.h"
#include "tl_tensor.h"

#include "shape_index.h"

/* the r-dim bool mask of index tuples in increasing (non-decreasing) order */
static tl_tensor *triu_mask(int64_t n, int64_t r, bool diagonal, int device) {
    tl_tensor *range = tl_ops_arange(tl_scalar_from_int(n), TL_INT64, -1, device, false, false);
    if (!range) return NULL;
    tl_tensor **rs = malloc(sizeof *rs * (size_t)r), **grids = NULL, *mask = NULL;
    int64_t ng = 0;
    if (!rs) {
        tl_tensor_release(range);
        tl_set_error(TL_ERR_MEMORY, "out of memory");
        return NULL;
    }
    for (int64_t i = 0; i < r; i++) rs[i] = range;
    if (tl_ops_meshgrid_indexing(rs, r, "ij", &grids, &ng) < 0) goto done;
    mask = tl_ops_full(grids[0]->sizes, grids[0]->ndim, tl_scalar_from_int(1), TL_BOOL, -1, device, false, false);
    for (int64_t i = 0; mask && i < r - 1; i++) {
        tl_tensor *c = diagonal ? tl_ops_le_Tensor(grids[i], grids[i + 1]) : tl_ops_lt_Tensor(grids[i], grids[i + 1]);
        tl_tensor *m = c ? tl_ops_logical_and_(mask, c) : NULL;
        tl_tensor_release(c);
        if (!m) {
            tl_tensor_release(mask);
            mask = NULL;
        }
        tl_tensor_release(m);
    }
done:
    if (grids) tl_tensor_list_free(grids, ng);
    free(rs);
    tl_tensor_release(range);
    return mask;
}

tl_tensor *tl_native_combinations(tl_keyset ks, tl_tensor *self, int64_t r, bool with_replacement) {
    (void)ks;
    if (self->ndim != 1) {
        char b[256];
        tl_set_error(TL_ERR_RUNTIME, "Expect a 1D vector, but got shape %s",
                     si_shape_str(b, sizeof b, self->ndim, self->sizes));
        return NULL;
    }
    if (r < 0) {
        tl_set_error(TL_ERR_RUNTIME, "Expect a non-negative number, but got %lld", (long long)r);
        return NULL;
    }
    const int device = (int)tl__device_of(self);
    if (r == 0) {
        const int64_t zero = 0;
        return tl_ops_empty_memory_format(&zero, 1, self->dtype, -1, device, false, false, -1);
    }
    tl_tensor **selves = malloc(sizeof *selves * (size_t)r), **grids = NULL, *out = NULL;
    int64_t ng = 0;
    if (!selves) {
        tl_set_error(TL_ERR_MEMORY, "out of memory");
        return NULL;
    }
    for (int64_t i = 0; i < r; i++) selves[i] = self;
    tl_tensor *mask = triu_mask(self->sizes[0], r, with_replacement, device);
    if (!mask || tl_ops_meshgrid_indexing(selves, r, "ij", &grids, &ng) < 0) goto done;
    for (int64_t i = 0; i < ng; i++) {
        tl_tensor *sel = tl_ops_index_Tensor(grids[i], &mask, 1);
        tl_tensor_release(grids[i]);
        grids[i] = sel;
        if (!sel) goto done;
    }
    out = tl_ops_stack(grids, ng, 1);
done:
    if (grids) tl_tensor_list_free(grids, ng);
    tl_tensor_release(mask);
    free(selves);
    return out;
}
