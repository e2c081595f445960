/* Shape helpers PyTorch writes as compositions of other operators
 * (aten/src/ATen/native/TensorShape.cpp, UnaryOps.cpp, BinaryOps.cpp,
 * ExpandUtils.h): ravel, fliplr / flipud / rot90, tensor_split and the
 * h/v/dsplit family, column_stack / dstack, unsafe_chunk / unsafe_split,
 * positive, true_divide, square, isreal, the conj / neg no-ops of real
 * dtypes, real, vdot, diagflat, sum_to_size.
 *
 * All but rot90, unsafe_split (CompositeExplicitAutograd) and vdot (CPU) are
 * CompositeImplicitAutograd: autograd records the operators they call.
 * torchlet has no complex dtypes, so the complex branches of PyTorch's code
 * never apply. Messages are PyTorch's. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "complex_ops.h"
#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/atleast_3d.h"
#include "ops/cat.h"
#include "ops/clone.h"
#include "ops/column_stack.h"
#include "ops/conj.h"
#include "ops/conj_physical.h"
#include "ops/contiguous.h"
#include "ops/diag.h"
#include "ops/diagflat.h"
#include "ops/div.h"
#include "ops/dot.h"
#include "ops/dsplit.h"
#include "ops/dstack.h"
#include "ops/eq.h"
#include "ops/flip.h"
#include "ops/fliplr.h"
#include "ops/flipud.h"
#include "ops/hsplit.h"
#include "ops/hstack.h"
#include "ops/imag.h"
#include "ops/isreal.h"
#include "ops/ones_like.h"
#include "ops/positive.h"
#include "ops/pow.h"
#include "ops/ravel.h"
#include "ops/real.h"
#include "ops/reshape.h"
#include "ops/resolve_conj.h"
#include "ops/resolve_neg.h"
#include "ops/rot90.h"
#include "ops/slice.h"
#include "ops/split.h"
#include "ops/square.h"
#include "ops/sum.h"
#include "ops/sum_to_size.h"
#include "ops/tensor_split.h"
#include "ops/transpose.h"
#include "ops/true_divide.h"
#include "ops/unsafe_chunk.h"
#include "ops/unsafe_split.h"
#include "ops/vdot.h"
#include "ops/view.h"
#include "ops/vsplit.h"
#include "tl_structured.h"
#include "tl_tensor.h"

#include "shape_index.h"

static tl_tensor *same(tl_tensor *self) {
    tl_tensor_retain(self);
    return self;
}

/* ------------------------------------------------------- views and flips */

tl_tensor *tl_native_ravel(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    tl_tensor *c = tl_ops_contiguous(self, 0);
    if (!c) return NULL;
    const int64_t all = -1;
    tl_tensor *r = tl_ops_view(c, &all, 1);
    tl_tensor_release(c);
    return r;
}

tl_tensor *tl_native_fliplr(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    if (self->ndim < 2) {
        tl_set_error(TL_ERR_RUNTIME, "Input must be >= 2-d.");
        return NULL;
    }
    const int64_t d = 1;
    return tl_ops_flip(self, &d, 1);
}

tl_tensor *tl_native_flipud(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    if (self->ndim < 1) {
        tl_set_error(TL_ERR_RUNTIME, "Input must be >= 1-d.");
        return NULL;
    }
    const int64_t d = 0;
    return tl_ops_flip(self, &d, 1);
}

/* CompositeExplicitAutograd (Rot90Backward0: grad.rot90(-k, dims)) */
tl_tensor *tl_native_rot90(tl_keyset ks, tl_tensor *self, int64_t k, const int64_t *dims, int64_t dims_len) {
    (void)ks;
    const int64_t total = self->ndim;
    if (dims_len != 2) {
        tl_set_error(TL_ERR_RUNTIME, "expected total rotation dims == 2, but got dims = %lld", (long long)dims_len);
        return NULL;
    }
    if (total < 2) {
        tl_set_error(TL_ERR_RUNTIME, "expected total dims >= 2, but got total dims = %lld", (long long)total);
        return NULL;
    }
    const int64_t d0 = dims[0], d1 = dims[1];
    if (d0 == d1 || llabs(d0 - d1) == total) {
        tl_set_error(TL_ERR_RUNTIME, "expected rotation dims to be different, but got dim0 = %lld and dim1 = %lld",
                     (long long)d0, (long long)d1);
        return NULL;
    }
    if (!(d0 < total && d0 >= -total)) {
        tl_set_error(TL_ERR_RUNTIME, "Rotation dim0 out of range, dim0 = %lld", (long long)d0);
        return NULL;
    }
    if (!(d1 < total && d1 >= -total)) {
        tl_set_error(TL_ERR_RUNTIME, "Rotation dim1 out of range, dim1 = %lld", (long long)d1);
        return NULL;
    }
    k = (4 + (k % 4)) % 4;   /* a negative k turns the other way */
    if (k == 0) return tl_ops_clone(self, 0);
    if (k == 2) return tl_ops_flip(self, dims, 2);
    /* PyTorch transposes the flipped result in place; a transposed view of it is the same tensor */
    tl_tensor *f = tl_ops_flip(self, k == 1 ? &dims[1] : &dims[0], 1);
    if (!f) return NULL;
    tl_tensor *r = tl_ops_transpose_int(f, d0, d1);
    tl_tensor_release(f);
    return r;
}

/* ------------------------------------------------------------ tensor_split */

static int need_1d(const tl_tensor *self) {
    if (self->ndim > 0) return 0;
    return tl_set_error(TL_ERR_RUNTIME,
                        "tensor_split expected at least a 1-dimensional tensor, but got a tensor with %lld dims",
                        (long long)self->ndim);
}

/* n slices of self along d from bounds[i] to bounds[i + 1] (slice's clamping and wrapping) */
static int slices(tl_tensor *self, int64_t d, const int64_t *starts, const int64_t *ends, int64_t n,
                  tl_tensor ***ret, int64_t *ret_len) {
    tl_tensor **out = calloc((size_t)(n > 0 ? n : 1), sizeof *out);
    if (!out) return tl_set_error(TL_ERR_MEMORY, "out of memory");
    for (int64_t i = 0; i < n; i++) {
        out[i] = tl_ops_slice_Tensor(self, d, starts[i], true, ends[i], true, 1);
        if (!out[i]) {
            tl_tensor_list_free(out, n);
            return -1;
        }
    }
    *ret = out;
    *ret_len = n;
    return 0;
}

int tl_native_tensor_split_sections_symint(tl_keyset ks, tl_tensor *self, int64_t sections, int64_t dim,
                                           tl_tensor ***ret, int64_t *ret_len) {
    (void)ks;
    if (need_1d(self)) return -1;
    const int64_t d = tl__wrap_dim(dim, self->ndim, 0);
    if (d < 0) return -1;
    if (sections <= 0)
        return tl_set_error(TL_ERR_RUNTIME, "number of sections must be larger than 0, got %lld", (long long)sections);
    const int64_t size = self->sizes[d], min_split = size / sections, extra = size % sections;
    int64_t *b = malloc(sizeof(int64_t) * (size_t)(2 * sections));
    if (!b) return tl_set_error(TL_ERR_MEMORY, "out of memory");
    int64_t start = 0;
    for (int64_t i = 0; i < sections; i++) {   /* the first size % sections pieces get one more */
        b[i] = start;
        start += extra > i ? min_split + 1 : min_split;
        b[sections + i] = start;
    }
    int rc = slices(self, d, b, b + sections, sections, ret, ret_len);
    free(b);
    return rc;
}

int tl_native_tensor_split_indices_symint(tl_keyset ks, tl_tensor *self, const int64_t *indices, int64_t indices_len,
                                          int64_t dim, tl_tensor ***ret, int64_t *ret_len) {
    (void)ks;
    if (need_1d(self)) return -1;
    const int64_t d = tl__wrap_dim(dim, self->ndim, 0);
    if (d < 0) return -1;
    const int64_t n = indices_len + 1;
    int64_t *b = malloc(sizeof(int64_t) * (size_t)(2 * n));
    if (!b) return tl_set_error(TL_ERR_MEMORY, "out of memory");
    b[0] = 0;
    for (int64_t i = 0; i < indices_len; i++) b[n + i] = b[i + 1] = indices[i];
    b[2 * n - 1] = self->sizes[d];
    int rc = slices(self, d, b, b + n, n, ret, ret_len);
    free(b);
    return rc;
}

int tl_native_tensor_split(tl_keyset ks, tl_tensor *self, tl_tensor *tios, int64_t dim, tl_tensor ***ret,
                           int64_t *ret_len) {
    if (need_1d(self)) return -1;
    if (tl__device_of(tios) != TL_CPU)
        return tl_set_error(TL_ERR_RUNTIME, "tensor_split expected tensor_indices_or_sections to be on cpu, but it's on %s",
                            tl__device_of(tios) == TL_CUDA ? "cuda:0" : "meta");
    if (tios->dtype != TL_INT64)
        return tl_set_error(TL_ERR_RUNTIME,
                            "tensor_split expected tensor_indices_or_sections to have dtype of long, but got %s",
                            tl_dtype_scalar_name(tios->dtype));
    if (tios->ndim > 1)
        return tl_set_error(TL_ERR_RUNTIME,
                            "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                            "one-dimensional tensor, but got a tensor with %lld dims",
                            (long long)tios->ndim);
    tl_scalar s;
    if (tios->ndim == 0) {
        if (tl_tensor_item(tios, &s) < 0) return -1;
        return tl_ops_tensor_split_sections(self, s.i, dim, ret, ret_len);
    }
    const int64_t n = tios->sizes[0];
    int64_t *idx = malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
    if (!idx) return tl_set_error(TL_ERR_MEMORY, "out of memory");
    const int64_t *p = (const int64_t *)tl_tensor_data_ptr(tios);   /* may be strided */
    for (int64_t i = 0; i < n; i++) idx[i] = p[i * tios->strides[0]];
    int rc = tl_native_tensor_split_indices_symint(ks, self, idx, n, dim, ret, ret_len);
    free(idx);
    return rc;
}

/* hsplit / vsplit / dsplit: tensor_split along dim, which needs min_dim dims */
static int xsplit_int(tl_tensor *self, int64_t sections, const char *name, int64_t min_dim, int64_t dim,
                      tl_tensor ***ret, int64_t *ret_len) {
    if (self->ndim < min_dim)
        return tl_set_error(TL_ERR_RUNTIME,
                            "torch.%s requires a tensor with at least %lld dimension, but got a tensor with %lld dimensions!",
                            name, (long long)min_dim, (long long)self->ndim);
    if (sections == 0 || self->sizes[dim] % sections != 0)
        return tl_set_error(TL_ERR_RUNTIME,
                            "torch.%s attempted to split along dimension %lld, but the size of the dimension %lld is not "
                            "divisible by the split_size %lld!",
                            name, (long long)dim, (long long)self->sizes[dim], (long long)sections);
    return tl_ops_tensor_split_sections(self, sections, dim, ret, ret_len);
}

static int xsplit_array(tl_tensor *self, const int64_t *indices, int64_t n, const char *name, int64_t min_dim,
                        int64_t dim, tl_tensor ***ret, int64_t *ret_len) {
    if (self->ndim < min_dim)
        return tl_set_error(TL_ERR_RUNTIME,
                            "torch.%s requires a tensor with at least %lld dimension, but got a tensor with %lld dimensions!",
                            name, (long long)min_dim, (long long)self->ndim);
    return tl_ops_tensor_split_indices(self, indices, n, dim, ret, ret_len);
}

int tl_native_hsplit(tl_keyset ks, tl_tensor *self, int64_t sections, tl_tensor ***ret, int64_t *ret_len) {
    (void)ks;
    return xsplit_int(self, sections, "hsplit", 1, self->ndim == 1 ? 0 : 1, ret, ret_len);
}

int tl_native_hsplit__hsplit_array(tl_keyset ks, tl_tensor *self, const int64_t *indices, int64_t indices_len,
                                   tl_tensor ***ret, int64_t *ret_len) {
    (void)ks;
    return xsplit_array(self, indices, indices_len, "hsplit", 1, self->ndim == 1 ? 0 : 1, ret, ret_len);
}

int tl_native_vsplit(tl_keyset ks, tl_tensor *self, int64_t sections, tl_tensor ***ret, int64_t *ret_len) {
    (void)ks;
    return xsplit_int(self, sections, "vsplit", 2, 0, ret, ret_len);
}

int tl_native_vsplit__vsplit_array(tl_keyset ks, tl_tensor *self, const int64_t *indices, int64_t indices_len,
                                   tl_tensor ***ret, int64_t *ret_len) {
    (void)ks;
    return xsplit_array(self, indices, indices_len, "vsplit", 2, 0, ret, ret_len);
}

int tl_native_dsplit(tl_keyset ks, tl_tensor *self, int64_t sections, tl_tensor ***ret, int64_t *ret_len) {
    (void)ks;
    return xsplit_int(self, sections, "dsplit", 3, 2, ret, ret_len);
}

int tl_native_dsplit__dsplit_array(tl_keyset ks, tl_tensor *self, const int64_t *indices, int64_t indices_len,
                                   tl_tensor ***ret, int64_t *ret_len) {
    (void)ks;
    return xsplit_array(self, indices, indices_len, "dsplit", 3, 2, ret, ret_len);
}

/* ------------------------------------------------------ column_stack / dstack */

/* column_stack: 0-d / 1-d inputs as (numel, 1) columns, then hstack; dstack:
 * atleast_3d, then cat along dim 2 (out: the .out variants when not NULL) */
static tl_tensor *stack_reshaped(tl_tensor *const *tensors, int64_t n, bool dstack, tl_tensor *out) {
    if (n == 0) {
        tl_set_error(TL_ERR_RUNTIME, "%s expects a non-empty TensorList", dstack ? "dstack" : "column_stack");
        return NULL;
    }
    tl_tensor **rep = calloc((size_t)n, sizeof *rep);
    if (!rep) {
        tl_set_error(TL_ERR_MEMORY, "out of memory");
        return NULL;
    }
    tl_tensor *r = NULL;
    for (int64_t i = 0; i < n; i++) {
        tl_tensor *t = tensors[i];
        if (dstack) rep[i] = tl_ops_atleast_3d(t);
        else if (t->ndim <= 1) {
            const int64_t col[2] = {tl_tensor_numel(t), 1};
            rep[i] = tl_ops_reshape(t, col, 2);
        } else rep[i] = same(t);
        if (!rep[i]) goto done;
    }
    if (dstack) r = out ? tl_ops_cat_out(rep, n, 2, out) : tl_ops_cat(rep, n, 2);
    else r = out ? tl_ops_hstack_out(rep, n, out) : tl_ops_hstack(rep, n);
done:
    tl_tensor_list_free(rep, n);
    return r;
}

tl_tensor *tl_native_column_stack(tl_keyset ks, tl_tensor *const *tensors, int64_t tensors_len) {
    (void)ks;
    return stack_reshaped(tensors, tensors_len, false, NULL);
}

tl_tensor *tl_native_column_stack_out(tl_keyset ks, tl_tensor *const *tensors, int64_t tensors_len, tl_tensor *out) {
    (void)ks;
    return stack_reshaped(tensors, tensors_len, false, out);
}

tl_tensor *tl_native_dstack(tl_keyset ks, tl_tensor *const *tensors, int64_t tensors_len) {
    (void)ks;
    return stack_reshaped(tensors, tensors_len, true, NULL);
}

tl_tensor *tl_native_dstack_out(tl_keyset ks, tl_tensor *const *tensors, int64_t tensors_len, tl_tensor *out) {
    (void)ks;
    return stack_reshaped(tensors, tensors_len, true, out);
}

/* ------------------------------------------------ unsafe_chunk / unsafe_split */

/* CompositeExplicitAutograd: split's pieces, made below autograd (one
 * UnsafeSplitBackward0 node records them) */
int tl_native_unsafe_split(tl_keyset ks, tl_tensor *self, int64_t split_size, int64_t dim, tl_tensor ***ret,
                           int64_t *ret_len) {
    (void)ks;
    return tl_ops_split_Tensor(self, split_size, dim, ret, ret_len);
}

int tl_native_unsafe_chunk(tl_keyset ks, tl_tensor *self, int64_t chunks, int64_t dim, tl_tensor ***ret,
                           int64_t *ret_len) {
    (void)ks;
    return tl__chunk_pieces(self, chunks, dim, true, ret, ret_len);
}

/* ------------------------------------------------------ pointwise aliases */

tl_tensor *tl_native_positive(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    if (self->dtype == TL_BOOL) {
        tl_set_error(TL_ERR_RUNTIME, "The `+` operator, on a bool tensor is not supported.");
        return NULL;
    }
    return same(self);
}

tl_tensor *tl_native_true_divide(tl_keyset ks, tl_tensor *self, tl_tensor *other) {
    (void)ks;
    return tl_ops_div_Tensor(self, other);
}

tl_tensor *tl_native_true_divide_(tl_keyset ks, tl_tensor *self, tl_tensor *other) {
    (void)ks;
    return tl_ops_div__Tensor(self, other);
}

tl_tensor *tl_native_true_divide_out(tl_keyset ks, tl_tensor *self, tl_tensor *other, tl_tensor *out) {
    (void)ks;
    return tl_ops_div_out(self, other, out);
}

tl_tensor *tl_native_true_divide__true_divide_Scalar(tl_keyset ks, tl_tensor *self, tl_scalar other) {
    (void)ks;
    return tl_ops_div_Scalar(self, other);
}

tl_tensor *tl_native_true_divide___true_divide__Scalar(tl_keyset ks, tl_tensor *self, tl_scalar other) {
    (void)ks;
    return tl_ops_div__Scalar(self, other);
}

tl_tensor *tl_native_square(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    return tl_ops_pow_Tensor_Scalar(self, tl_scalar_from_int(2));
}

tl_tensor *tl_native_square_(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    return tl_ops_pow__Scalar(self, tl_scalar_from_int(2));
}

tl_tensor *tl_native_square_out(tl_keyset ks, tl_tensor *self, tl_tensor *out) {
    (void)ks;
    return tl_ops_pow_Tensor_Scalar_out(self, tl_scalar_from_int(2), out);
}

/* every integral and floating value is real; a complex one when its imaginary part is 0 */
tl_tensor *tl_native_isreal(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    if (tl_dtype_is_complex(self->dtype)) {
        tl_tensor *im = tl_ops_imag(self);
        tl_tensor *r = im ? tl_ops_eq_Scalar(im, tl_scalar_from_int(0)) : NULL;
        tl_tensor_release(im);
        return r;
    }
    return tl_ops_ones_like(self, TL_BOOL, -1, -1, false, false, TL_PRESERVE_FORMAT);
}

/* conj, resolve_conj, resolve_neg, conj_physical, real: self for real dtypes;
 * conj / conj_physical / real of complex tensors: complex_ops.c */
tl_tensor *tl_native_conj(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    return tl_dtype_is_complex(self->dtype) ? tl__complex_conj_physical(self) : same(self);
}

tl_tensor *tl_native_conj_physical(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    return tl_dtype_is_complex(self->dtype) ? tl__complex_conj_physical(self) : same(self);
}

tl_tensor *tl_native_resolve_conj(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    return same(self);
}

tl_tensor *tl_native_resolve_neg(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    return same(self);
}

tl_tensor *tl_native_real(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    return tl_dtype_is_complex(self->dtype) ? tl__complex_real(self) : same(self);
}

/* vdot of real vectors is dot (PyTorch's Blas.cpp dispatches there, with dot's checks);
 * complex: dot(self.conj(), other) */
tl_tensor *tl_native_vdot(tl_keyset ks, tl_tensor *self, tl_tensor *other) {
    (void)ks;
    if (!tl_dtype_is_complex(self->dtype)) return tl_ops_dot(self, other);
    tl_tensor *c = tl_ops_conj(self);
    tl_tensor *r = c ? tl_ops_dot(c, other) : NULL;
    tl_tensor_release(c);
    return r;
}

/* ------------------------------------------------- diagflat / sum_to_size */

tl_tensor *tl_native_diagflat(tl_keyset ks, tl_tensor *self, int64_t offset) {
    tl_tensor *flat = tl_native_ravel(ks, self);
    if (!flat) return NULL;
    tl_tensor *r = tl_ops_diag(flat, offset);
    tl_tensor_release(flat);
    return r;
}

static void fmt_ints(char *buf, size_t n, const int64_t *v, int64_t len) {
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int64_t i = 0; i < len && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? ", " : "", (long long)v[i]);
    if (k < n) snprintf(buf + k, n - k, "]");
}

/* ExpandUtils' sum_to: the leading dims and the dims size 1 in `size` summed
 * (keepdim), then viewed as `size`; self itself when nothing is summed */
tl_tensor *tl_native_sum_to_size_symint(tl_keyset ks, tl_tensor *self, const int64_t *size, int64_t size_len) {
    (void)ks;
    const int64_t nd = self->ndim, lead = nd - size_len;
    bool ok = size_len <= nd;
    for (int64_t i = 0; ok && i < size_len; i++) {
        const int64_t s = size[size_len - 1 - i], t = self->sizes[nd - 1 - i];
        if (s != t && s != 1) ok = false;
    }
    if (!ok) {
        char a[256], b[256];
        fmt_ints(a, sizeof a, size, size_len);
        fmt_ints(b, sizeof b, self->sizes, nd);
        tl_set_error(TL_ERR_RUNTIME, "size {%s} is not expandable to size {%s}.", a, b);
        return NULL;
    }
    if (size_len == 0) return tl_ops_sum(self, TL_DTYPE_UNDEFINED);
    int64_t dims[TL_MAX_DIMS];
    int64_t nr = 0;
    for (int64_t i = 0; i < nd; i++)
        if (i < lead || (size[i - lead] == 1 && self->sizes[i] != 1)) dims[nr++] = i;
    tl_tensor *t = nr ? tl_ops_sum_dim_IntList(self, dims, nr, true, TL_DTYPE_UNDEFINED) : same(self);
    if (!t || lead == 0) return t;
    tl_tensor *r = tl_ops_view(t, size, size_len);
    tl_tensor_release(t);
    return r;
}
