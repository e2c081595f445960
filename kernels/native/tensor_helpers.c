/* The tensor API's conversions and helpers that PyTorch writes as
 * compositions of other operators (aten/src/ATen/native/TensorConversions.cpp,
 * TensorShape.cpp, TensorFactories.cpp, TensorCompare.cpp, ReduceOps.cpp):
 * type_as / expand_as / view_as / reshape_as, new_empty / new_zeros /
 * new_ones / new_full, broadcast_to / broadcast_tensors, movedim / moveaxis,
 * atleast_1d / 2d / 3d, meshgrid, eye, isclose / allclose / equal.
 *
 * All but eye and equal are CompositeImplicitAutograd (autograd flows through
 * the operators they call); the messages are PyTorch's. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "complex_ops.h"
#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/add.h"
#include "ops/alias.h"
#include "ops/all.h"
#include "ops/allclose.h"
#include "ops/as_strided.h"
#include "ops/atleast_1d.h"
#include "ops/atleast_2d.h"
#include "ops/atleast_3d.h"
#include "ops/broadcast_tensors.h"
#include "ops/broadcast_to.h"
#include "ops/empty.h"
#include "ops/eq.h"
#include "ops/equal.h"
#include "ops/expand.h"
#include "ops/expand_as.h"
#include "ops/eye.h"
#include "ops/fill.h"
#include "ops/full.h"
#include "ops/isclose.h"
#include "ops/isfinite.h"
#include "ops/le.h"
#include "ops/logical_and.h"
#include "ops/logical_or.h"
#include "ops/meshgrid.h"
#include "ops/moveaxis.h"
#include "ops/movedim.h"
#include "ops/mul.h"
#include "ops/new_empty.h"
#include "ops/new_full.h"
#include "ops/new_ones.h"
#include "ops/new_zeros.h"
#include "ops/ones.h"
#include "ops/permute.h"
#include "ops/reshape.h"
#include "ops/reshape_as.h"
#include "ops/sub.h"
#include "ops/to.h"
#include "ops/type_as.h"
#include "ops/view.h"
#include "ops/view_as.h"
#include "ops/zeros.h"
#include "tl_structured.h"
#include "tl_tensor.h"

/* "[1, 2]" as PyTorch prints an IntArrayRef */
static void fmt_ints(char *buf, size_t n, const int64_t *v, int64_t len) {
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int64_t i = 0; i < len && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? ", " : "", (long long)v[i]);
    if (k < n) snprintf(buf + k, n - k, "]");
}

/* ------------------------------------------------------- *_as conversions */

tl_tensor *tl_native_type_as(tl_keyset ks, tl_tensor *self, tl_tensor *other) {
    (void)ks;
    return tl_ops_to_other(self, other, false, false, -1);
}

tl_tensor *tl_native_expand_as(tl_keyset ks, tl_tensor *self, tl_tensor *other) {
    (void)ks;
    return tl_ops_expand(self, other->sizes, other->ndim, false);
}

tl_tensor *tl_native_view_as(tl_keyset ks, tl_tensor *self, tl_tensor *other) {
    (void)ks;
    return tl_ops_view(self, other->sizes, other->ndim);
}

tl_tensor *tl_native_reshape_as(tl_keyset ks, tl_tensor *self, tl_tensor *other) {
    (void)ks;
    return tl_ops_reshape(self, other->sizes, other->ndim);
}

/* ------------------------------------------------------------ new_* */
/* self's dtype and device unless given (PyTorch: self.options().merge_in(options)) */

static tl_dtype new_dtype(const tl_tensor *self, tl_dtype dtype) {
    return dtype == TL_DTYPE_UNDEFINED ? self->dtype : dtype;
}
/* self's device with its cuda index (the new tensor is not made on the current device) */
static int new_device(const tl_tensor *self, int device) { return device < 0 ? (int)tl__device_of(self) : device; }

tl_tensor *tl_native_new_empty_symint(tl_keyset ks, tl_tensor *self, const int64_t *size, int64_t size_len,
                                      tl_dtype dtype, int layout, int device, bool pin_memory, bool pin_memory_has) {
    (void)ks;
    return tl_ops_empty_memory_format(size, size_len, new_dtype(self, dtype), layout, new_device(self, device),
                                      pin_memory, pin_memory_has, -1);
}

tl_tensor *tl_native_new_zeros(tl_keyset ks, tl_tensor *self, const int64_t *size, int64_t size_len, tl_dtype dtype,
                               int layout, int device, bool pin_memory, bool pin_memory_has) {
    (void)ks;
    return tl_ops_zeros(size, size_len, new_dtype(self, dtype), layout, new_device(self, device), pin_memory,
                        pin_memory_has);
}

tl_tensor *tl_native_new_ones(tl_keyset ks, tl_tensor *self, const int64_t *size, int64_t size_len, tl_dtype dtype,
                              int layout, int device, bool pin_memory, bool pin_memory_has) {
    (void)ks;
    return tl_ops_ones(size, size_len, new_dtype(self, dtype), layout, new_device(self, device), pin_memory,
                       pin_memory_has);
}

tl_tensor *tl_native_new_full(tl_keyset ks, tl_tensor *self, const int64_t *size, int64_t size_len,
                              tl_scalar fill_value, tl_dtype dtype, int layout, int device, bool pin_memory,
                              bool pin_memory_has) {
    (void)ks;
    return tl_ops_full(size, size_len, fill_value, new_dtype(self, dtype), layout, new_device(self, device),
                       pin_memory, pin_memory_has);
}

/* ------------------------------------------------------------ broadcasting */

tl_tensor *tl_native_broadcast_to_symint(tl_keyset ks, tl_tensor *self, const int64_t *size, int64_t size_len) {
    (void)ks;
    return tl_ops_expand(self, size, size_len, false);
}

/* PyTorch's infer_size over a list of shapes (its message names a and b) */
static int broadcast_shape(tl_tensor *const *ts, int64_t n, int64_t *out, int64_t *out_nd) {
    int64_t nd = 0;
    for (int64_t i = 0; i < n; i++)
        if (ts[i]->ndim > nd) nd = ts[i]->ndim;
    for (int64_t d = 0; d < nd; d++) out[d] = 1;
    for (int64_t i = 0; i < n; i++) {
        const tl_tensor *t = ts[i];
        for (int64_t d = 0; d < t->ndim; d++) {
            const int64_t od = nd - t->ndim + d, a = out[od], b = t->sizes[d];
            if (a == b || b == 1) continue;
            if (a != 1)
                return tl_set_error(TL_ERR_RUNTIME,
                                    "The size of tensor a (%lld) must match the size of tensor b (%lld) at "
                                    "non-singleton dimension %lld",
                                    (long long)a, (long long)b, (long long)od);
            out[od] = b;
        }
    }
    *out_nd = nd;
    return 0;
}

static int tensor_list(int64_t n, tl_tensor ***ret, int64_t *ret_len) {
    tl_tensor **out = calloc((size_t)(n > 0 ? n : 1), sizeof *out);
    if (!out) return tl_set_error(TL_ERR_MEMORY, "out of memory");
    *ret = out;
    *ret_len = n;
    return 0;
}

int tl_native_broadcast_tensors(tl_keyset ks, tl_tensor *const *tensors, int64_t tensors_len, tl_tensor ***ret,
                                int64_t *ret_len) {
    (void)ks;
    int64_t shape[TL_MAX_DIMS], nd = 0;
    if (broadcast_shape(tensors, tensors_len, shape, &nd)) return -1;
    if (tensor_list(tensors_len, ret, ret_len)) return -1;
    for (int64_t i = 0; i < tensors_len; i++)
        if (!((*ret)[i] = tl_ops_expand(tensors[i], shape, nd, false))) {
            tl_tensor_list_free(*ret, tensors_len);
            return -1;
        }
    return 0;
}

/* ------------------------------------------------------------ movedim */

tl_tensor *tl_native_movedim_intlist(tl_keyset ks, tl_tensor *self, const int64_t *source, int64_t source_len,
                                     const int64_t *destination, int64_t destination_len) {
    (void)ks;
    char a[256], b[256];
    if (source_len != destination_len) {
        fmt_ints(a, sizeof a, source, source_len);
        fmt_ints(b, sizeof b, destination, destination_len);
        tl_set_error(TL_ERR_RUNTIME,
                     "movedim: Invalid source or destination dims: source (%s dims) should contain the same number "
                     "of dims as destination (%s dims)", a, b);
        return NULL;
    }
    const int64_t nd = self->ndim, n = source_len;
    if (n > TL_MAX_DIMS || (nd > 0 && n > nd)) {   /* then a dim repeats (or is out of range) */
        for (int64_t i = 0; i < n; i++)
            if (tl__wrap_dim(source[i], nd, 1) < 0 || tl__wrap_dim(destination[i], nd, 1) < 0) return NULL;
    }
    int64_t src[TL_MAX_DIMS], dst[TL_MAX_DIMS];
    for (int64_t i = 0; i < n && i < TL_MAX_DIMS; i++)
        if ((src[i] = tl__wrap_dim(source[i], nd, 1)) < 0) return NULL;
    for (int64_t i = 0; i < n && i < TL_MAX_DIMS; i++)
        if ((dst[i] = tl__wrap_dim(destination[i], nd, 1)) < 0) return NULL;
    for (int pass = 0; pass < 2; pass++) {
        const int64_t *v = pass ? dst : src;
        for (int64_t i = 0; i < n && i < TL_MAX_DIMS; i++)
            for (int64_t j = 0; j < i; j++)
                if (v[i] == v[j]) {
                    fmt_ints(a, sizeof a, pass ? destination : source, n);
                    tl_set_error(TL_ERR_RUNTIME, "movedim: repeated dim in `%s` (%s)",
                                 pass ? "destination" : "source", a);
                    return NULL;
                }
    }
    if (nd == 0) return tl_ops_alias(self);
    /* moved dims go to their destinations; the others keep their order in the free slots */
    int64_t order[TL_MAX_DIMS];
    bool src_used[TL_MAX_DIMS] = {false}, dst_used[TL_MAX_DIMS] = {false};
    for (int64_t i = 0; i < n; i++) {
        order[dst[i]] = src[i];
        src_used[src[i]] = dst_used[dst[i]] = true;
    }
    for (int64_t s = 0, d = 0;; s++, d++) {
        while (s < nd && src_used[s]) s++;
        while (d < nd && dst_used[d]) d++;
        if (s >= nd || d >= nd) break;
        order[d] = s;
    }
    return tl_ops_permute(self, order, nd);
}

tl_tensor *tl_native_movedim_int(tl_keyset ks, tl_tensor *self, int64_t source, int64_t destination) {
    return tl_native_movedim_intlist(ks, self, &source, 1, &destination, 1);
}

tl_tensor *tl_native_moveaxis_intlist(tl_keyset ks, tl_tensor *self, const int64_t *source, int64_t source_len,
                                      const int64_t *destination, int64_t destination_len) {
    (void)ks;
    return tl_ops_movedim_intlist(self, source, source_len, destination, destination_len);
}

tl_tensor *tl_native_moveaxis_int(tl_keyset ks, tl_tensor *self, int64_t source, int64_t destination) {
    (void)ks;
    return tl_ops_movedim_int(self, source, destination);
}

/* ------------------------------------------------------------ atleast_nd */

/* self reshaped to n dims when it has fewer (PyTorch's atleast_{1,2,3}d):
 * 0-d -> [1]*n; 1-d -> [1, k] (2-d) or [1, k, 1] (3-d); 2-d -> [a, b, 1] (3-d) */
static tl_tensor *atleast(tl_tensor *self, int64_t n) {
    const int64_t nd = self->ndim;
    if (nd >= n) {
        tl_tensor_retain(self);
        return self;
    }
    int64_t shape[3] = {1, 1, 1};
    if (nd == 1) shape[1] = self->sizes[0];
    if (nd == 2) {
        shape[0] = self->sizes[0];
        shape[1] = self->sizes[1];
    }
    if (nd == 0) return tl_ops_reshape(self, shape, n);
    /* 1-d and 2-d: PyTorch unsqueezes (a view, never a copy) */
    return tl_ops_view(self, shape, n);
}

static int atleast_list(tl_tensor *const *ts, int64_t len, int64_t n, tl_tensor ***ret, int64_t *ret_len) {
    if (tensor_list(len, ret, ret_len)) return -1;
    for (int64_t i = 0; i < len; i++)
        if (!((*ret)[i] = atleast(ts[i], n))) {
            tl_tensor_list_free(*ret, len);
            return -1;
        }
    return 0;
}

tl_tensor *tl_native_atleast_1d(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    return atleast(self, 1);
}
tl_tensor *tl_native_atleast_2d(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    return atleast(self, 2);
}
tl_tensor *tl_native_atleast_3d(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    return atleast(self, 3);
}
int tl_native_atleast_1d_sequence(tl_keyset ks, tl_tensor *const *tensors, int64_t tensors_len, tl_tensor ***ret,
                                  int64_t *ret_len) {
    (void)ks;
    return atleast_list(tensors, tensors_len, 1, ret, ret_len);
}
int tl_native_atleast_2d_sequence(tl_keyset ks, tl_tensor *const *tensors, int64_t tensors_len, tl_tensor ***ret,
                                  int64_t *ret_len) {
    (void)ks;
    return atleast_list(tensors, tensors_len, 2, ret, ret_len);
}
int tl_native_atleast_3d_sequence(tl_keyset ks, tl_tensor *const *tensors, int64_t tensors_len, tl_tensor ***ret,
                                  int64_t *ret_len) {
    (void)ks;
    return atleast_list(tensors, tensors_len, 3, ret, ret_len);
}

/* ------------------------------------------------------------ meshgrid */

int tl_native_meshgrid_indexing(tl_keyset ks, tl_tensor *const *tensors, int64_t tensors_len, const char *indexing,
                                tl_tensor ***ret, int64_t *ret_len) {
    (void)ks;
    const int64_t n = tensors_len;
    if (n <= 0) return tl_set_error(TL_ERR_RUNTIME, "meshgrid expects a non-empty TensorList");
    for (int64_t i = 0; i + 1 < n; i++) {
        if (tensors[i]->dtype != tensors[i + 1]->dtype)
            return tl_set_error(TL_ERR_RUNTIME, "meshgrid expects all tensors to have the same dtype");
        if (tensors[i]->device != tensors[i + 1]->device)
            return tl_set_error(TL_ERR_RUNTIME, "meshgrid expects all tensors to have the same device");
    }
    bool swap = false;
    if (strcmp(indexing, "xy") == 0)
        swap = n >= 2;
    else if (strcmp(indexing, "ij") != 0)
        return tl_set_error(TL_ERR_RUNTIME,
                            "torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: %s", indexing);
    if (n > TL_MAX_DIMS) return tl_set_error(TL_ERR_RUNTIME, "meshgrid: too many tensors (%lld)", (long long)n);
    tl_tensor *in[TL_MAX_DIMS];
    for (int64_t i = 0; i < n; i++) in[i] = tensors[i];
    if (swap) {
        in[0] = tensors[1];
        in[1] = tensors[0];
    }
    int64_t shape[TL_MAX_DIMS], view[TL_MAX_DIMS];
    for (int64_t i = 0; i < n; i++) {
        if (in[i]->ndim > 1)
            return tl_set_error(TL_ERR_RUNTIME,
                                "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: %lldD tensor",
                                (long long)in[i]->ndim);
        shape[i] = in[i]->numel;   /* a 0-d tensor counts as 1-d */
        view[i] = 1;
    }
    if (tensor_list(n, ret, ret_len)) return -1;
    for (int64_t i = 0; i < n; i++) {
        view[i] = -1;
        tl_tensor *v = tl_ops_view(in[i], view, n);
        view[i] = 1;
        const int64_t slot = swap && i < 2 ? 1 - i : i;
        if (!v || !((*ret)[slot] = tl_ops_expand(v, shape, n, false))) {
            tl_tensor_release(v);
            tl_tensor_list_free(*ret, n);
            return -1;
        }
        tl_tensor_release(v);
    }
    return 0;
}

int tl_native_meshgrid(tl_keyset ks, tl_tensor *const *tensors, int64_t tensors_len, tl_tensor ***ret,
                       int64_t *ret_len) {
    TL_WARN_ONCE("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.");
    return tl_native_meshgrid_indexing(ks, tensors, tensors_len, "ij", ret, ret_len);
}

/* ------------------------------------------------------------ eye */

tl_tensor *tl_native_eye_m(tl_keyset ks, int64_t n, int64_t m, tl_dtype dtype, int layout, int device,
                           bool pin_memory, bool pin_memory_has) {
    (void)ks;
    if (n < 0) {
        tl_set_error(TL_ERR_RUNTIME, "n must be greater or equal to 0, got %lld", (long long)n);
        return NULL;
    }
    if (m < 0) {
        tl_set_error(TL_ERR_RUNTIME, "m must be greater or equal to 0, got %lld", (long long)m);
        return NULL;
    }
    if (dtype == TL_DTYPE_UNDEFINED) dtype = tl_get_default_dtype();
    const int64_t size[2] = {n, m};
    tl_tensor *r = tl_ops_zeros(size, 2, dtype, layout, device, pin_memory, pin_memory_has);
    if (!r || n == 0 || m == 0) return r;
    const int64_t dn = n < m ? n : m, ds = m + 1;   /* the main diagonal as a strided view */
    tl_tensor *d = tl_ops_as_strided(r, &dn, 1, &ds, 1, 0, false);
    tl_tensor *f = d ? tl_ops_fill__Scalar(d, tl_scalar_from_int(1)) : NULL;
    tl_tensor_release(d);
    if (!f) {
        tl_tensor_release(r);
        return NULL;
    }
    tl_tensor_release(f);
    return r;
}

tl_tensor *tl_native_eye(tl_keyset ks, int64_t n, tl_dtype dtype, int layout, int device, bool pin_memory,
                         bool pin_memory_has) {
    return tl_native_eye_m(ks, n, n, dtype, layout, device, pin_memory, pin_memory_has);
}

/* ------------------------------------------------------------ closeness */

/* PyTorch's isclose: |self - other| <= atol + rtol * |other|, finite, or
 * equal (NaN == NaN with equal_nan); non-float inputs compare in the
 * default float dtype so that unsigned and bool differences do not wrap. */
tl_tensor *tl_native_isclose(tl_keyset ks, tl_tensor *self, tl_tensor *other, double rtol, double atol,
                             bool equal_nan) {
    (void)ks;
    if (self->dtype != other->dtype) {
        tl_set_error(TL_ERR_RUNTIME, "%s did not match %s", tl_dtype_scalar_name(self->dtype),
                     tl_dtype_scalar_name(other->dtype));
        return NULL;
    }
    if (rtol < 0) {
        tl_set_error(TL_ERR_RUNTIME, "rtol must be greater than or equal to zero, but got %g", rtol);
        return NULL;
    }
    if (atol < 0) {
        tl_set_error(TL_ERR_RUNTIME, "atol must be greater than or equal to zero, but got %g", atol);
        return NULL;
    }
    /* complex: |.| and isnan of both parts (complex_ops.c) */
    const bool fl = tl_dtype_is_floating(self->dtype) || tl_dtype_is_complex(self->dtype);
    tl_tensor *close = tl_ops_eq_Tensor(self, other);
    if (!close) return NULL;
    tl_tensor *a = NULL, *b = NULL, *c = NULL, *x = NULL, *y = NULL, *diff = NULL, *act = NULL, *ro = NULL,
              *allow = NULL, *fin = NULL, *le = NULL, *ok = NULL, *r = NULL;
    if (equal_nan && fl) {
        if (!(a = tl__isnan_any(self)) || !(b = tl__isnan_any(other)) || !(c = tl_ops_logical_and(a, b)) ||
            !(r = tl_ops_logical_or(close, c)))
            goto done;
        tl_tensor_release(close);
        close = r;
        r = NULL;
    }
    if (rtol == 0 && atol == 0) {
        r = close;
        close = NULL;
        goto done;
    }
    const tl_dtype ct = fl ? self->dtype : tl_get_default_dtype();
    const tl_scalar one = tl_scalar_from_int(1);
    if (!(x = tl_ops_to_dtype(self, ct, false, false, -1)) || !(y = tl_ops_to_dtype(other, ct, false, false, -1)) ||
        !(diff = tl_ops_sub_Tensor(x, y, one)) || !(act = tl__abs_any(diff)) ||
        !(ro = tl_ops_mul_Scalar(y, tl_scalar_from_double(rtol))) || !(allow = tl__abs_any(ro)) ||
        !(fin = tl_ops_add_Scalar(allow, tl_scalar_from_double(atol), one)) || !(le = tl_ops_le_Tensor(act, fin)))
        goto done;
    tl_tensor_release(fin);
    if (!(fin = tl_ops_isfinite(act)) || !(ok = tl_ops_logical_and(fin, le))) goto done;
    r = tl_ops_logical_or(close, ok);
done:
    tl_tensor_release(close);
    tl_tensor_release(a);
    tl_tensor_release(b);
    tl_tensor_release(c);
    tl_tensor_release(x);
    tl_tensor_release(y);
    tl_tensor_release(diff);
    tl_tensor_release(act);
    tl_tensor_release(ro);
    tl_tensor_release(allow);
    tl_tensor_release(fin);
    tl_tensor_release(le);
    tl_tensor_release(ok);
    return r;
}

static int all_true(tl_tensor *t, bool *ret) {
    tl_tensor *a = tl_ops_all(t);
    tl_scalar v;
    const int rc = a ? tl_tensor_item(a, &v) : -1;
    tl_tensor_release(a);
    if (rc) return -1;
    *ret = v.i != 0;
    return 0;
}

int tl_native_allclose(tl_keyset ks, tl_tensor *self, tl_tensor *other, double rtol, double atol, bool equal_nan,
                       bool *ret) {
    (void)ks;
    tl_tensor *c = tl_ops_isclose(self, other, rtol, atol, equal_nan);
    if (!c) return -1;
    const int rc = all_true(c, ret);
    tl_tensor_release(c);
    return rc;
}

/* caffe2's TypeMeta names, as PyTorch's equal() prints them */
static const char *typemeta_name(tl_dtype dt) {
    static const char *names[TL_NUM_DTYPES] = {"bool",  "unsigned char", "signed char", "short int", "int",
                                               "long int", "c10::Half", "c10::BFloat16", "float", "double",
                                               "c10::complex<float>", "c10::complex<double>"};
    return tl_dtype_valid(dt) ? names[dt] : "Undefined";
}

/* PyTorch's cpu_equal: same dtype (else an error), same sizes, every element
 * equal (NaN is not equal to itself) */
int tl_native_cpu_equal(tl_keyset ks, tl_tensor *self, tl_tensor *other, bool *ret) {
    (void)ks;
    if (self->device != other->device)
        return tl_set_error(TL_ERR_RUNTIME, "Cannot compare two tensors on different devices. Got: %s and %s",
                            self->device == TL_META ? "meta" : "cpu", other->device == TL_META ? "meta" : "cpu");
    if (self->dtype != other->dtype)
        return tl_set_error(TL_ERR_RUNTIME,
                            "Expected object of scalar type %s but got scalar type %s for argument 'other'",
                            typemeta_name(self->dtype), typemeta_name(other->dtype));
    bool same = self->ndim == other->ndim;
    for (int64_t i = 0; same && i < self->ndim; i++) same = self->sizes[i] == other->sizes[i];
    if (!same) {
        *ret = false;
        return 0;
    }
    tl_tensor *e = tl_ops_eq_Tensor(self, other);
    if (!e) return -1;
    const int rc = all_true(e, ret);
    tl_tensor_release(e);
    return rc;
}
