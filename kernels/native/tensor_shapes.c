/* The tensor API's shape and range helpers (aten/src/ATen/native/TensorShape.cpp,
 * TensorFactories.cpp, RangeFactories.cpp, ReduceOps.cpp): repeat / tile,
 * roll, diagonal / diagonal_backward / diag_embed / diag, trace /
 * trace_backward, tril_indices / triu_indices, cartesian_prod, randperm,
 * randint (linspace / logspace: linspace.c); and the autograd helpers repeat_backward and
 * roll_backward (declared in autograd/tl_autograd_formulas.h).
 *
 * Views are made with tl_as_strided (no autograd inside: the generated
 * autograd kernels record the YAML's formulas); composites call operators, so
 * autograd flows through them. The messages are PyTorch's. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tl_autograd_formulas.h"
#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/cartesian_prod.h"
#include "ops/cat.h"
#include "ops/clone.h"
#include "ops/diag.h"
#include "ops/diag_embed.h"
#include "ops/diagonal.h"
#include "ops/diagonal_backward.h"
#include "ops/eye.h"
#include "ops/flatten.h"
#include "ops/meshgrid.h"
#include "ops/mul.h"
#include "ops/randint.h"
#include "ops/random.h"
#include "ops/randperm.h"
#include "ops/repeat.h"
#include "ops/reshape.h"
#include "ops/roll.h"
#include "ops/stack.h"
#include "ops/sum.h"
#include "ops/tile.h"
#include "ops/to.h"
#include "ops/trace.h"
#include "ops/trace_backward.h"
#include "ops/tril_indices.h"
#include "ops/triu_indices.h"
#include "tl_runtime.h"
#include "tl_tensor.h"

/* ------------------------------------------------------------ repeat / tile */

tl_tensor *tl_native_repeat(tl_keyset ks, tl_tensor *self, const int64_t *repeats, int64_t repeats_len) {
    (void)ks;
    const int64_t nd = self->ndim, n = repeats_len;
    if (n < nd) {
        tl_set_error(TL_ERR_RUNTIME,
                     "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
        return NULL;
    }
    if (2 * n > TL_MAX_DIMS) {
        tl_set_error(TL_ERR_RUNTIME, "repeat: too many dimensions (%lld)", (long long)n);
        return NULL;
    }
    for (int64_t i = 0; i < n; i++)
        if (repeats[i] < 0) {
            tl_set_error(TL_ERR_RUNTIME, "Trying to create tensor with negative dimension %lld: [%lld]",
                         (long long)repeats[i], (long long)repeats[i]);
            return NULL;
        }
    /* self padded with leading 1s, seen as [r0, s0, r1, s1, ...] with the
     * repeat dims of stride 0; its contiguous copy is the result */
    int64_t sz[TL_MAX_DIMS], st[TL_MAX_DIMS], out[TL_MAX_DIMS];
    for (int64_t i = 0; i < n; i++) {
        const int64_t j = i - (n - nd);
        const int64_t s = j >= 0 ? self->sizes[j] : 1;
        sz[2 * i] = repeats[i];
        st[2 * i] = 0;
        sz[2 * i + 1] = s;
        st[2 * i + 1] = j >= 0 ? self->strides[j] : 0;
        out[i] = repeats[i] * s;
    }
    tl_tensor *v = tl_as_strided(self, 2 * n, sz, st, self->storage_offset);
    tl_tensor *c = v ? tl_clone(v) : NULL;
    tl_tensor_release(v);
    if (!c) return NULL;
    tl_tensor *r = tl_view(c, n, out);
    tl_tensor_release(c);
    return r;
}

tl_tensor *tl_ag_repeat_backward(tl_tensor *grad, const int64_t *repeats, int64_t nrepeats, const int64_t *sizes,
                                 int64_t ndim) {
    const int64_t n = nrepeats;
    int64_t split[TL_MAX_DIMS], rdims[TL_MAX_DIMS / 2];
    if (2 * n > TL_MAX_DIMS) {
        tl_set_error(TL_ERR_RUNTIME, "repeat: too many dimensions (%lld)", (long long)n);
        return NULL;
    }
    for (int64_t i = 0; i < n; i++) {
        const int64_t j = i - (n - ndim);
        split[2 * i] = repeats[i];
        split[2 * i + 1] = j >= 0 ? sizes[j] : 1;
        rdims[i] = 2 * i;
    }
    tl_tensor *g = tl_ops_reshape(grad, split, 2 * n);
    tl_tensor *s = g ? tl_ops_sum_dim_IntList(g, rdims, n, false, TL_DTYPE_UNDEFINED) : NULL;
    tl_tensor_release(g);
    if (!s) return NULL;
    tl_tensor *r = tl_ops_reshape(s, sizes, ndim);
    tl_tensor_release(s);
    return r;
}

/* PyTorch's tile: dims padded with leading 1s to self's rank, then repeat */
tl_tensor *tl_native_tile_symint(tl_keyset ks, tl_tensor *self, const int64_t *dims, int64_t dims_len) {
    (void)ks;
    const int64_t nd = self->ndim;
    if (dims_len >= nd) return tl_ops_repeat(self, dims, dims_len);
    int64_t reps[TL_MAX_DIMS];
    for (int64_t i = 0; i < nd; i++) reps[i] = i < nd - dims_len ? 1 : dims[i - (nd - dims_len)];
    return tl_ops_repeat(self, reps, nd);
}

/* ------------------------------------------------------------ roll */

static tl_tensor *roll_dim(tl_tensor *x, int64_t shift, int64_t dim) {
    const int64_t n = x->sizes[dim];
    const int64_t s = n ? ((shift % n) + n) % n : 0;
    if (s == 0) return tl_clone(x);
    tl_tensor *parts[2] = {tl_narrow(x, dim, n - s, s), tl_narrow(x, dim, 0, n - s)};
    tl_tensor *r = parts[0] && parts[1] ? tl_ops_cat(parts, 2, dim) : NULL;
    tl_tensor_release(parts[0]);
    tl_tensor_release(parts[1]);
    return r;
}

tl_tensor *tl_native_roll(tl_keyset ks, tl_tensor *self, const int64_t *shifts, int64_t shifts_len,
                          const int64_t *dims, int64_t dims_len) {
    (void)ks;
    if (shifts_len == 0) {
        tl_set_error(TL_ERR_RUNTIME, "`shifts` required");
        return NULL;
    }
    if (dims_len == 0 && shifts_len == 1) {   /* the flattened tensor rolled */
        const int64_t flat = self->numel;
        tl_tensor *f = tl_reshape(self, 1, &flat);
        tl_tensor *r = f ? roll_dim(f, shifts[0], 0) : NULL;
        tl_tensor_release(f);
        if (!r) return NULL;
        tl_tensor *v = tl_view(r, self->ndim, self->sizes);
        tl_tensor_release(r);
        return v;
    }
    if (shifts_len != dims_len) {
        tl_set_error(TL_ERR_RUNTIME, "shifts and dimensions must align. shifts: %lld, dims:%lld",
                     (long long)shifts_len, (long long)dims_len);
        return NULL;
    }
    tl_tensor *cur = self;
    tl_tensor_retain(cur);
    for (int64_t i = 0; i < dims_len; i++) {
        const int64_t d = tl__wrap_dim(dims[i], self->ndim, 1);
        tl_tensor *next = d < 0 ? NULL : self->ndim == 0 ? tl_clone(cur) : roll_dim(cur, shifts[i], d);
        tl_tensor_release(cur);
        if (!(cur = next)) return NULL;
    }
    return cur;
}

tl_tensor *tl_ag_roll_backward(tl_tensor *grad, const int64_t *shifts, int64_t nshifts, const int64_t *dims,
                               int64_t ndims) {
    int64_t neg[TL_MAX_DIMS];
    if (nshifts > TL_MAX_DIMS) {
        tl_set_error(TL_ERR_RUNTIME, "roll: too many shifts (%lld)", (long long)nshifts);
        return NULL;
    }
    for (int64_t i = 0; i < nshifts; i++) neg[i] = -shifts[i];
    return tl_ops_roll(grad, neg, nshifts, dims, ndims);
}

/* ------------------------------------------------------------ diagonals */

/* the view of self's diagonal (PyTorch's diagonal: dim1 and dim2 removed, the
 * diagonal appended last) */
static tl_tensor *diagonal_view(tl_tensor *self, int64_t offset, int64_t dim1, int64_t dim2) {
    const int64_t nd = self->ndim;
    const int64_t d1 = tl__wrap_dim(dim1, nd, 0), d2 = d1 < 0 ? -1 : tl__wrap_dim(dim2, nd, 0);
    if (d1 < 0 || d2 < 0) return NULL;
    if (d1 == d2) {
        tl_set_error(TL_ERR_RUNTIME, "diagonal dimensions cannot be identical %lld, %lld", (long long)dim1,
                     (long long)dim2);
        return NULL;
    }
    const int64_t s1 = self->sizes[d1], s2 = self->sizes[d2];
    int64_t diag = offset >= 0 ? (s1 < s2 - offset ? s1 : s2 - offset) : (s1 + offset < s2 ? s1 + offset : s2);
    if (diag < 0) diag = 0;
    int64_t off = self->storage_offset;
    if (diag > 0) off += offset >= 0 ? offset * self->strides[d2] : -offset * self->strides[d1];
    int64_t sz[TL_MAX_DIMS], st[TL_MAX_DIMS], k = 0;
    for (int64_t i = 0; i < nd; i++)
        if (i != d1 && i != d2) {
            sz[k] = self->sizes[i];
            st[k++] = self->strides[i];
        }
    sz[k] = diag;
    st[k++] = self->strides[d1] + self->strides[d2];
    return tl_as_strided(self, k, sz, st, off);
}

tl_tensor *tl_native_diagonal(tl_keyset ks, tl_tensor *self, int64_t offset, int64_t dim1, int64_t dim2) {
    (void)ks;
    return diagonal_view(self, offset, dim1, dim2);
}

/* zeros of `sizes` whose diagonal holds src */
static tl_tensor *zeros_with_diagonal(tl_tensor *src, const int64_t *sizes, int64_t nd, int64_t offset,
                                      int64_t dim1, int64_t dim2) {
    tl_tensor *r = tl_zeros(nd, sizes, src->dtype, tl__device_of(src));
    tl_tensor *d = r ? diagonal_view(r, offset, dim1, dim2) : NULL;
    if (!d || tl_copy_(d, src)) {
        tl_tensor_release(d);
        tl_tensor_release(r);
        return NULL;
    }
    tl_tensor_release(d);
    return r;
}

tl_tensor *tl_native_diagonal_backward_symint(tl_keyset ks, tl_tensor *grad_output, const int64_t *input_sizes,
                                              int64_t input_sizes_len, int64_t offset, int64_t dim1, int64_t dim2) {
    (void)ks;
    return zeros_with_diagonal(grad_output, input_sizes, input_sizes_len, offset, dim1, dim2);
}

tl_tensor *tl_native_diag_embed(tl_keyset ks, tl_tensor *self, int64_t offset, int64_t dim1, int64_t dim2) {
    (void)ks;
    const int64_t nd = self->ndim + 1;
    const int64_t d1 = tl__wrap_dim(dim1, nd, 0), d2 = d1 < 0 ? -1 : tl__wrap_dim(dim2, nd, 0);
    if (d1 < 0 || d2 < 0) return NULL;
    if (d1 == d2) {
        tl_set_error(TL_ERR_RUNTIME, "diagonal dimensions cannot be identical %lld, %lld", (long long)dim1,
                     (long long)dim2);
        return NULL;
    }
    if (nd > TL_MAX_DIMS) {
        tl_set_error(TL_ERR_RUNTIME, "diag_embed: too many dimensions (%lld)", (long long)nd);
        return NULL;
    }
    const int64_t last = self->ndim ? self->sizes[self->ndim - 1] : 1;
    const int64_t n = last + (offset < 0 ? -offset : offset);
    int64_t sizes[TL_MAX_DIMS];
    for (int64_t i = 0, j = 0; i < nd; i++) sizes[i] = i == d1 || i == d2 ? n : self->sizes[j++];
    return zeros_with_diagonal(self, sizes, nd, offset, d1, d2);
}

tl_tensor *tl_native_diag(tl_keyset ks, tl_tensor *self, int64_t diagonal) {
    (void)ks;
    if (self->ndim == 1) return tl_ops_diag_embed(self, diagonal, 0, 1);
    if (self->ndim != 2) {
        tl_set_error(TL_ERR_RUNTIME, "diag(): Supports 1D or 2D tensors. Got %lldD", (long long)self->ndim);
        return NULL;
    }
    tl_tensor *d = tl_ops_diagonal(self, diagonal, 0, 1);
    tl_tensor *r = d ? tl_ops_clone(d, -1) : NULL;
    tl_tensor_release(d);
    return r;
}

/* ------------------------------------------------------------ trace */

tl_tensor *tl_native_trace_cpu(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    if (self->ndim != 2) {
        tl_set_error(TL_ERR_RUNTIME, "trace: expected a matrix, but got tensor with dim %lld", (long long)self->ndim);
        return NULL;
    }
    tl_tensor *d = diagonal_view(self, 0, 0, 1);
    tl_tensor *r = d ? tl_ops_sum(d, TL_DTYPE_UNDEFINED) : NULL;
    tl_tensor_release(d);
    return r;
}

tl_tensor *tl_native_trace_backward_symint(tl_keyset ks, tl_tensor *grad, const int64_t *sizes, int64_t sizes_len) {
    (void)ks;
    if (sizes_len != 2) {
        tl_set_error(TL_ERR_RUNTIME, "expected matrix input");
        return NULL;
    }
    tl_tensor *eye = tl_ops_eye_m(sizes[0], sizes[1], grad->dtype, -1, (int)grad->device, false, false);
    tl_tensor *r = eye ? tl_ops_mul_Tensor(eye, grad) : NULL;
    tl_tensor_release(eye);
    return r;
}

/* ------------------------------------------------------------ tril / triu indices */

static int check_row_col(int64_t row, int64_t col, int layout) {
    if (row < 0) return tl_set_error(TL_ERR_RUNTIME, "row must be non-negative, got%lld", (long long)row);
    if (col < 0) return tl_set_error(TL_ERR_RUNTIME, "col must be non-negative, got%lld", (long long)col);
    if (layout > 0) return tl_set_error(TL_ERR_RUNTIME, "only support layout=torch.strided, got%d", layout);
    return 0;
}

/* [2, count] coordinates (row-major) of the lower (c - r <= offset) or upper
 * (c - r >= offset) triangle */
static tl_tensor *tri_indices(int64_t row, int64_t col, int64_t offset, tl_dtype dtype, int layout, int device,
                              bool upper) {
    if (tl__device_type_of(device) == TL_CUDA)  /* computed on the host, then copied */
        return tl__host_result_to(tri_indices(row, col, offset, dtype, layout, TL_CPU, upper), device);
    if (check_row_col(row, col, layout)) return NULL;
    if (dtype == TL_DTYPE_UNDEFINED) dtype = TL_INT64;
    int64_t count = 0;
    for (int64_t r = 0; r < row; r++) {
        int64_t lo = upper ? r + offset : 0, hi = upper ? col : r + offset + 1;   /* [lo, hi) */
        if (lo < 0) lo = 0;
        if (hi > col) hi = col;
        if (hi > lo) count += hi - lo;
    }
    const int64_t size[2] = {2, count};
    tl_tensor *out = tl_empty(2, size, TL_INT64, TL_CPU);
    if (!out) return NULL;
    int64_t *p = tl_tensor_data_ptr(out), k = 0;
    for (int64_t r = 0; r < row && count; r++) {
        int64_t lo = upper ? r + offset : 0, hi = upper ? col : r + offset + 1;
        if (lo < 0) lo = 0;
        if (hi > col) hi = col;
        for (int64_t c = lo; c < hi; c++, k++) {
            p[k] = r;
            p[count + k] = c;
        }
    }
    tl_tensor *r = tl_ops_to_dtype_layout(out, dtype, -1, device, false, false, false, false, -1);
    tl_tensor_release(out);
    return r;
}

tl_tensor *tl_native_tril_indices_cpu(tl_keyset ks, int64_t row, int64_t col, int64_t offset, tl_dtype dtype,
                                      int layout, int device, bool pin_memory, bool pin_memory_has) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    return tri_indices(row, col, offset, dtype, layout, device, false);
}

tl_tensor *tl_native_triu_indices_cpu(tl_keyset ks, int64_t row, int64_t col, int64_t offset, tl_dtype dtype,
                                      int layout, int device, bool pin_memory, bool pin_memory_has) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    return tri_indices(row, col, offset, dtype, layout, device, true);
}

/* ------------------------------------------------------------ cartesian_prod */

tl_tensor *tl_native_cartesian_prod(tl_keyset ks, tl_tensor *const *tensors, int64_t tensors_len) {
    (void)ks;
    for (int64_t i = 0; i < tensors_len; i++)
        if (tensors[i]->ndim != 1) {
            char shape[256];
            size_t k = (size_t)snprintf(shape, sizeof shape, "[");
            for (int64_t d = 0; d < tensors[i]->ndim && k < sizeof shape; d++)
                k += (size_t)snprintf(shape + k, sizeof shape - k, "%s%lld", d ? ", " : "",
                                      (long long)tensors[i]->sizes[d]);
            if (k < sizeof shape) snprintf(shape + k, sizeof shape - k, "]");
            tl_set_error(TL_ERR_RUNTIME, "Expect a 1D vector, but got shape %s", shape);
            return NULL;
        }
    if (tensors_len == 1) {
        tl_tensor_retain(tensors[0]);
        return tensors[0];
    }
    tl_tensor **grid = NULL;
    int64_t n = 0;
    if (tl_ops_meshgrid_indexing(tensors, tensors_len, "ij", &grid, &n)) return NULL;
    tl_tensor *flat[TL_MAX_DIMS];
    int64_t k = 0;
    tl_tensor *r = NULL;
    for (; k < n && k < TL_MAX_DIMS; k++)
        if (!(flat[k] = tl_ops_flatten_using_ints(grid[k], 0, -1))) break;
    if (k == n) r = tl_ops_stack(flat, n, 1);
    for (int64_t i = 0; i < k; i++) tl_tensor_release(flat[i]);
    tl_tensor_list_free(grid, n);
    return r;
}

/* ------------------------------------------------------------ randperm / randint */


static tl_tensor *randperm_impl(int64_t n, tl_generator *g, tl_dtype dtype, int layout, int device) {
    if (tl__device_type_of(device) == TL_CUDA)  /* computed on the host, then copied */
        return tl__host_result_to(randperm_impl(n, g, dtype, layout, TL_CPU), device);
    if (n < 0) {
        tl_set_error(TL_ERR_RUNTIME, "n must be non-negative, got%lld", (long long)n);
        return NULL;
    }
    if (layout > 0) {
        tl_set_error(TL_ERR_RUNTIME, "only support layout=torch.strided, got%d", layout);
        return NULL;
    }
    if (dtype == TL_DTYPE_UNDEFINED) dtype = TL_INT64;
    const tl_device_type dev = device < 0 ? TL_CPU : (tl_device_type)device;
    if (dev == TL_META) return tl_empty(1, &n, dtype, TL_META);
    tl_tensor *r = tl_empty(1, &n, TL_INT64, TL_CPU);
    if (!r) return NULL;
    int64_t *p = tl_tensor_data_ptr(r);
    if (!g) g = tl_default_generator();
    /* PyTorch's randperm_cpu: swaps with random() % (n - i) below 2^32 / 20
     * elements, the inside-out shuffle on random64() above */
    tl_generator_lock(g);
    if (n < (int64_t)(UINT32_MAX / 20)) {
        for (int64_t i = 0; i < n; i++) p[i] = i;
        for (int64_t i = 0; i < n - 1; i++) {
            const int64_t z = (int64_t)(tl_generator_random(g) % (uint64_t)(n - i)), t = p[i];
            p[i] = p[z + i];
            p[z + i] = t;
        }
    } else {
        for (int64_t i = 0; i < n; i++) {
            const int64_t z = (int64_t)(tl_generator_random64(g) % (uint64_t)(i + 1));
            p[i] = p[z];
            p[z] = i;
        }
    }
    tl_generator_unlock(g);
    tl_tensor *out = tl_to_dtype(r, dtype, 0);
    tl_tensor_release(r);
    return out;
}

tl_tensor *tl_native_randperm(tl_keyset ks, int64_t n, tl_dtype dtype, int layout, int device, bool pin_memory,
                              bool pin_memory_has) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    return randperm_impl(n, NULL, dtype, layout, device);
}

tl_tensor *tl_native_randperm_generator(tl_keyset ks, int64_t n, tl_generator *generator, tl_dtype dtype, int layout,
                                        int device, bool pin_memory, bool pin_memory_has) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    return randperm_impl(n, generator, dtype, layout, device);
}

static tl_tensor *randint_impl(int64_t low, int64_t high, const int64_t *size, int64_t nd, tl_generator *g,
                               tl_dtype dtype, int layout, int device) {
    if (tl__device_type_of(device) == TL_CUDA)  /* computed on the host, then copied */
        return tl__host_result_to(randint_impl(low, high, size, nd, g, dtype, layout, TL_CPU), device);
    if (low >= high) {
        tl_set_error(TL_ERR_RUNTIME, "random_ expects 'from' to be less than 'to', but got from=%lld >= to=%lld",
                     (long long)low, (long long)high);
        return NULL;
    }
    if (layout > 0) {
        tl_set_error(TL_ERR_RUNTIME, "only support layout=torch.strided, got%d", layout);
        return NULL;
    }
    if (dtype == TL_DTYPE_UNDEFINED) dtype = TL_INT64;
    const tl_device_type dev = device < 0 ? TL_CPU : (tl_device_type)device;
    if (dev == TL_META) return tl_empty(nd, size, dtype, TL_META);
    /* PyTorch's randint: empty(size, dtype).random_(low, high) */
    tl_tensor *r = tl_empty(nd, size, dtype, TL_CPU);
    tl_tensor *out = r ? tl_ops_random__from(r, low, high, true, g) : NULL;
    tl_tensor_release(r);
    return out;
}

tl_tensor *tl_native_randint(tl_keyset ks, int64_t high, const int64_t *size, int64_t size_len, tl_dtype dtype,
                             int layout, int device, bool pin_memory, bool pin_memory_has) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    return randint_impl(0, high, size, size_len, NULL, dtype, layout, device);
}

tl_tensor *tl_native_randint_generator(tl_keyset ks, int64_t high, const int64_t *size, int64_t size_len,
                                       tl_generator *generator, tl_dtype dtype, int layout, int device,
                                       bool pin_memory, bool pin_memory_has) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    return randint_impl(0, high, size, size_len, generator, dtype, layout, device);
}

tl_tensor *tl_native_randint_low(tl_keyset ks, int64_t low, int64_t high, const int64_t *size, int64_t size_len,
                                 tl_dtype dtype, int layout, int device, bool pin_memory, bool pin_memory_has) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    return randint_impl(low, high, size, size_len, NULL, dtype, layout, device);
}

tl_tensor *tl_native_randint_low_generator(tl_keyset ks, int64_t low, int64_t high, const int64_t *size,
                                           int64_t size_len, tl_generator *generator, tl_dtype dtype, int layout,
                                           int device, bool pin_memory, bool pin_memory_has) {
    (void)ks; (void)pin_memory; (void)pin_memory_has;
    return randint_impl(low, high, size, size_len, generator, dtype, layout, device);
}
