/* .out and other overloads of PyTorch's, each over the operator's existing
 * kernels:
 *
 *  - softmax.int_out / log_softmax.int_out (CompositeExplicitAutograd, as
 *    PyTorch's softmax_out: the functional result copied into out, whose
 *    dtype must be the result's);
 *  - nll_loss.out (CompositeImplicitAutograd: nll_loss_forward.output with a
 *    throw-away total_weight, as PyTorch) and nll_loss_forward.output (CPU);
 *  - eq/ne/lt/le/gt/ge.Scalar_out: the number wrapped, then the .Tensor_out;
 *  - the factory outs (zeros/ones/full/empty/rand/randn/arange),
 *    threshold_backward.grad_input / mse_loss_backward.grad_input,
 *    fill.Scalar/.Tensor + fill_.Tensor, narrow.Tensor, view.dtype
 *    (docs/OPS_MISSING.md, "Overloads").
 */
#include "missing_ops.h"
#include "pointwise_math.h"
#include "shape_index.h"
#include "tl_autograd.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/arange.h"
#include "ops/empty.h"
#include "ops/eq.h"
#include "ops/fill.h"
#include "ops/full.h"
#include "ops/ge.h"
#include "ops/gt.h"
#include "ops/le.h"
#include "ops/log_softmax.h"
#include "ops/lt.h"
#include "ops/mse_loss_backward.h"
#include "ops/narrow.h"
#include "ops/ne.h"
#include "ops/nll_loss.h"
#include "ops/nll_loss_forward.h"
#include "ops/ones.h"
#include "ops/rand.h"
#include "ops/randn.h"
#include "ops/softmax.h"
#include "ops/threshold_backward.h"
#include "ops/view.h"
#include "ops/zeros.h"
#include "tl_structured.h"

tl_tensor *tl_native_softmax_out(tl_keyset ks, tl_tensor *self, int64_t dim, tl_dtype dtype, tl_tensor *out) {
    (void)ks;
    return tl_missing_copy_to_out(tl_ops_softmax_int(self, dim, dtype), out);
}

tl_tensor *tl_native_log_softmax_out(tl_keyset ks, tl_tensor *self, int64_t dim, tl_dtype dtype, tl_tensor *out) {
    (void)ks;
    return tl_missing_copy_to_out(tl_ops_log_softmax_int(self, dim, dtype), out);
}

int tl_native_nll_loss_forward_out_cpu(tl_keyset ks, tl_tensor *self, tl_tensor *target, tl_tensor *weight,
                                       int64_t reduction, int64_t ignore_index, tl_tensor *output,
                                       tl_tensor *total_weight, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    tl_tensor *o = NULL, *tw = NULL;
    if (tl_ops_nll_loss_forward(self, target, weight, reduction, ignore_index, &o, &tw)) return -1;
    tl_tensor *r0 = tl_missing_copy_to_out(o, output);
    tl_tensor *r1 = r0 ? tl_missing_copy_to_out(tw, total_weight) : (tl_tensor_release(tw), NULL);
    if (!r1) {
        tl_tensor_release(r0);
        return -1;
    }
    *ret0 = r0;
    *ret1 = r1;
    return 0;
}

tl_tensor *tl_native_nll_loss_out(tl_keyset ks, tl_tensor *self, tl_tensor *target, tl_tensor *weight,
                                  int64_t reduction, int64_t ignore_index, tl_tensor *out) {
    (void)ks;
    const int64_t zero = 0;
    tl_tensor *tw = tl_empty(1, &zero, tl_tensor_dtype(self), tl__device_of(self));
    if (!tw) return NULL;
    tl_tensor *r0 = NULL, *r1 = NULL;
    int rc = tl_ops_nll_loss_forward_output(self, target, weight, reduction, ignore_index, out, tw, &r0, &r1);
    tl_tensor_release(tw);
    tl_tensor_release(r1);
    return rc ? NULL : r0;
}

/* op.Scalar_out(self, number, out=): op.Tensor_out(self, wrapped(number), out) */
#define TL_SCALAR_OUT(op)                                                                          \
    tl_tensor *tl_native_##op##_Scalar_out(tl_keyset ks, tl_tensor *self, tl_scalar other, tl_tensor *out) { \
        (void)ks;                                                                                  \
        return tl_pointwise_with_number_out(tl_ops_##op##_Tensor_out, self, other, out);           \
    }
TL_SCALAR_OUT(eq)
TL_SCALAR_OUT(ne)
TL_SCALAR_OUT(lt)
TL_SCALAR_OUT(le)
TL_SCALAR_OUT(gt)
TL_SCALAR_OUT(ge)

/* ------------------------------------------------------------ factory outs
 * The factory outs (PyTorch's TensorFactories.cpp / RangeFactories.cpp): `out`
 * takes the size with resize_ (no deprecation warning: PyTorch calls resize_,
 * not resize_output) and is filled in its own dtype. */

/* PyTorch's resize_: a no-op (strides kept) when the sizes already match */
static int resize_like_torch(tl_tensor *out, int64_t ndim, const int64_t *sizes) {
    if (out->ndim == ndim && (ndim == 0 || memcmp(out->sizes, sizes, (size_t)ndim * sizeof(int64_t)) == 0)) return 0;
    return tl_resize_(out, ndim, sizes);
}

/* empty.out, randn.out and rand/randn.generator_out resize through PyTorch's
 * dispatcher, where resize_'s autograd kernel refuses a tensor that requires
 * grad even of the right size and under no_grad (not in inference mode, which
 * turns the Autograd key off); zeros/ones/full/rand/arange .out fail earlier,
 * in their autograd kernel ("aten::zeros(): functions with out=...") */
static int check_resize_grad(const tl_tensor *out) {
    if (!tl_inference_mode_is_enabled() && tl_autograd_requires_grad(out))
        return tl_set_error(TL_ERR_RUNTIME, "cannot resize variables that require grad");
    return 0;
}

/* resize out to size, fill it with v; new reference to out */
static tl_tensor *filled_out(const int64_t *size, int64_t size_len, tl_scalar v, tl_tensor *out) {
    if (resize_like_torch(out, size_len, size)) return NULL;
    if (out->device != TL_META && tl_fill_(out, v)) return NULL;
    tl_tensor_retain(out);
    return out;
}

tl_tensor *tl_native_zeros_out(tl_keyset ks, const int64_t *size, int64_t size_len, tl_tensor *out) {
    (void)ks;
    return filled_out(size, size_len, tl_scalar_from_int(0), out);
}

tl_tensor *tl_native_ones_out(tl_keyset ks, const int64_t *size, int64_t size_len, tl_tensor *out) {
    (void)ks;
    return filled_out(size, size_len, tl_scalar_from_int(1), out);
}

tl_tensor *tl_native_full_out(tl_keyset ks, const int64_t *size, int64_t size_len, tl_scalar fill_value,
                              tl_tensor *out) {
    (void)ks;
    return filled_out(size, size_len, fill_value, out);
}

tl_tensor *tl_native_empty_out(tl_keyset ks, const int64_t *size, int64_t size_len, int memory_format,
                               tl_tensor *out) {
    (void)ks;
    if (memory_format >= 0) {
        tl_set_error(TL_ERR_RUNTIME, "'memory_format' argument is incompatible with 'out' tensor argument");
        return NULL;
    }
    for (int64_t i = 0; i < size_len; i++)
        if (size[i] < 0) {
            char buf[256];
            tl_set_error(TL_ERR_RUNTIME, "Trying to create tensor with negative dimension %lld: %s",
                         (long long)size[i], si_shape_str(buf, sizeof buf, size_len, size));
            return NULL;
        }
    if (check_resize_grad(out) || resize_like_torch(out, size_len, size)) return NULL;
    tl_tensor_retain(out);
    return out;
}

/* rand / randn into out: the functional draw in out's dtype (its dtype check
 * and message), then copied; the generator advances as for the functional */
static tl_tensor *random_out(const int64_t *size, int64_t size_len, tl_generator *gen, int normal, tl_tensor *out) {
    tl_tensor *r = (normal ? tl_ops_randn_generator : tl_ops_rand_generator)(
        size, size_len, gen, out->dtype, -1, (int)out->device, false, false);
    if (!r) return NULL;
    int rc = resize_like_torch(out, size_len, size);
    if (rc == 0 && out->device != TL_META) rc = tl_copy_(out, r);
    tl_tensor_release(r);
    if (rc) return NULL;
    tl_tensor_retain(out);
    return out;
}

tl_tensor *tl_native_rand_out(tl_keyset ks, const int64_t *size, int64_t size_len, tl_tensor *out) {
    (void)ks;
    return random_out(size, size_len, NULL, 0, out);
}

tl_tensor *tl_native_rand_generator_out(tl_keyset ks, const int64_t *size, int64_t size_len, tl_generator *generator,
                                        tl_tensor *out) {
    (void)ks;
    if (check_resize_grad(out)) return NULL;
    return random_out(size, size_len, generator, 0, out);
}

tl_tensor *tl_native_randn_out(tl_keyset ks, const int64_t *size, int64_t size_len, tl_tensor *out) {
    (void)ks;
    if (check_resize_grad(out)) return NULL;
    return random_out(size, size_len, NULL, 1, out);
}

tl_tensor *tl_native_randn_generator_out(tl_keyset ks, const int64_t *size, int64_t size_len,
                                         tl_generator *generator, tl_tensor *out) {
    (void)ks;
    if (check_resize_grad(out)) return NULL;
    return random_out(size, size_len, generator, 1, out);
}

/* arange into out (RangeFactories.cpp arange_out): computed in out's dtype;
 * out keeps its shape when its numel already matches, else it is resized to
 * [n] with PyTorch's own warning when it had elements */
static tl_tensor *arange_into(tl_scalar start, tl_scalar end, tl_scalar step, tl_tensor *out) {
    tl_tensor *r = tl_ops_arange_start_step(start, end, step, out->dtype, -1, (int)out->device, false, false);
    if (!r) return NULL;
    const int64_t n = r->numel;
    int rc = 0;
    if (out->numel != n) {
        if (out->numel > 0) {
            char buf[256];
            si_shape_str(buf, sizeof buf, out->ndim, out->sizes);
            tl__warn("The number of elements in the out tensor of shape %s is %lld which does not match the "
                     "computed number of elements %lld. Note that this may occur as a result of rounding error. "
                     "The out tensor will be resized to a tensor of shape (%lld,).",
                     buf, (long long)out->numel, (long long)n, (long long)n);
        }
        rc = tl_resize_(out, 1, &n);
    }
    if (rc == 0 && out->device != TL_META) {
        /* same numel, maybe another shape: copy element order through a view of r */
        tl_tensor *rv = tl_view(r, out->ndim, out->sizes);
        rc = rv ? tl_copy_(out, rv) : -1;
        tl_tensor_release(rv);
    }
    tl_tensor_release(r);
    if (rc) return NULL;
    tl_tensor_retain(out);
    return out;
}

tl_tensor *tl_native_arange_out(tl_keyset ks, tl_scalar end, tl_tensor *out) {
    (void)ks;
    return arange_into(tl_scalar_from_int(0), end, tl_scalar_from_int(1), out);
}

tl_tensor *tl_native_arange_start_out(tl_keyset ks, tl_scalar start, tl_scalar end, tl_scalar step, tl_tensor *out) {
    (void)ks;
    return arange_into(start, end, step, out);
}

/* ------------------------------------------- backward operators' out= forms */

/* out= with TensorIterator's out checks (broadcast shape, safe casting or
 * all-same-dtype, resize + warning) from a structured record over `inputs`,
 * then the functional `result` copied in. Releases result. */
static tl_tensor *iter_checked_out(uint32_t flags, int n, const tl_tensor *const *inputs, tl_tensor *result,
                                   tl_tensor *out) {
    if (!result) return NULL;
    tl_structured s;
    tl_structured_init(&s, TL_STRUCTURED_OUT, (int)out->device, 0);
    int rc = tl_structured_propose(&s, 0, out);
    if (rc == 0) rc = tl_structured_build(&s, flags, n, inputs, TL_DTYPE_UNDEFINED);
    if (rc == 0 && !tl_structured_skip_impl(&s)) rc = tl_copy_(s.outputs[0], result);
    tl_tensor_release(result);
    if (rc) {
        tl_structured_cleanup(&s);
        return NULL;
    }
    return tl_structured_finish(&s);
}

/* threshold_backward.grad_input (PyTorch: structured, build_borrowing_binary_op(self, grad)) */
tl_tensor *tl_native_threshold_backward_out(tl_keyset ks, tl_tensor *grad_output, tl_tensor *self,
                                            tl_scalar threshold, tl_tensor *grad_input) {
    (void)ks;
    const tl_tensor *in[2] = {self, grad_output};
    return iter_checked_out(TL_ITER_BINARY_OP, 2, in,
                            tl_ops_threshold_backward(grad_output, self, threshold), grad_input);
}

/* mse_loss_backward.grad_input (PyTorch: a TensorIterator over input, target,
 * grad that promotes them and casts safely into grad_input) */
tl_tensor *tl_native_mse_loss_backward_out(tl_keyset ks, tl_tensor *grad_output, tl_tensor *self, tl_tensor *target,
                                           int64_t reduction, tl_tensor *grad_input) {
    (void)ks;
    const tl_tensor *in[3] = {self, target, grad_output};
    return iter_checked_out(TL_ITER_BINARY_OP, 3, in,
                            tl_ops_mse_loss_backward(grad_output, self, target, reduction), grad_input);
}

/* --------------------------------------------------------- fill_, narrow, view */

/* fill_.Tensor: a 0-dim value copied over self (cloned first when it aliases
 * self, so it is read before being overwritten) */
tl_tensor *tl_native_fill__Tensor(tl_keyset ks, tl_tensor *self, tl_tensor *value) {
    (void)ks;
    if (value->ndim != 0) {
        tl_set_error(TL_ERR_RUNTIME, "fill_ only supports 0-dimension value tensor but got tensor with %lld dimensions.",
                     (long long)value->ndim);
        return NULL;
    }
    if (self->device == TL_META) {
        tl_tensor_retain(self);
        return self;
    }
    int rc;
    if (value->device != self->device) {
        tl_scalar v;
        rc = tl_tensor_item(value, &v);
        if (rc == 0) rc = tl_fill_(self, v);
    } else if (tl_tensor_is_alias_of(self, value)) {
        tl_tensor *c = tl_clone(value);
        rc = c ? tl_copy_(self, c) : -1;
        tl_tensor_release(c);
    } else {
        rc = tl_copy_(self, value);
    }
    if (rc) return NULL;
    tl_tensor_retain(self);
    return self;
}

/* narrow.Tensor: start given as a 0-dim integral tensor */
tl_tensor *tl_native_narrow_tensor(tl_keyset ks, tl_tensor *self, int64_t dim, tl_tensor *start, int64_t length) {
    (void)ks;
    tl_scalar st;
    if (start->ndim != 0 || !tl_dtype_is_integral(start->dtype, 0)) {
        tl_set_error(TL_ERR_RUNTIME, "start must be an 0-dim integral Tensor.");
        return NULL;
    }
    if (tl_tensor_item(start, &st)) return NULL;
    return tl_ops_narrow(self, dim, st.i, length);
}

/* view.dtype: the same bytes read as another dtype. Same element size: same
 * geometry. Otherwise the last dim (stride 1) is split or merged, PyTorch's
 * checks and messages in its order. */
tl_tensor *tl_native_view_dtype(tl_keyset ks, tl_tensor *self, tl_dtype dtype) {
    (void)ks;
    if (dtype == self->dtype) return tl_alias(self);
    const int64_t from = tl_dtype_itemsize(self->dtype), to = tl_dtype_itemsize(dtype), nd = self->ndim;
    const char *a = tl_dtype_scalar_name(self->dtype), *b = tl_dtype_scalar_name(dtype);
    int64_t sizes[TL_MAX_DIMS], strides[TL_MAX_DIMS], off = self->storage_offset;
    if (nd > 0) {
        memcpy(sizes, self->sizes, (size_t)nd * sizeof(int64_t));
        memcpy(strides, self->strides, (size_t)nd * sizeof(int64_t));
    }
    if (from != to) {
        if (nd == 0) {
            tl_set_error(TL_ERR_RUNTIME, "self.dim() cannot be 0 to view %s as %s (different element sizes)", a, b);
            return NULL;
        }
        if (from > to) { /* downsizing: more, smaller elements */
            const int64_t r = from / to;
            for (int64_t i = 0; i < nd - 1; i++) strides[i] *= r;
            sizes[nd - 1] *= r;
            off *= r;
        } else { /* upsizing */
            const int64_t r = to / from;
            if (sizes[nd - 1] % r) {
                tl_set_error(TL_ERR_RUNTIME, "self.size(-1) must be divisible by %lld to view %s as %s (different "
                             "element sizes), but got %lld", (long long)r, a, b, (long long)sizes[nd - 1]);
                return NULL;
            }
            if (off % r) {
                tl_set_error(TL_ERR_RUNTIME, "self.storage_offset() must be divisible by %lld to view %s as %s "
                             "(different element sizes), but got %lld", (long long)r, a, b, (long long)off);
                return NULL;
            }
            for (int64_t i = 0; i < nd - 1; i++) {
                if (strides[i] % r) {
                    tl_set_error(TL_ERR_RUNTIME, "self.stride(%lld) must be divisible by %lld to view %s as %s "
                                 "(different element sizes), but got %lld", (long long)i, (long long)r, a, b,
                                 (long long)strides[i]);
                    return NULL;
                }
                strides[i] /= r;
            }
            sizes[nd - 1] /= r;
            off /= r;
        }
        if (self->strides[nd - 1] != 1) {
            tl_set_error(TL_ERR_RUNTIME, "self.stride(-1) must be 1 to view %s as %s (different element sizes), "
                         "but got %lld", a, b, (long long)self->strides[nd - 1]);
            return NULL;
        }
    }
    return tl__tensor_alloc(self->storage, off, nd, sizes, strides, dtype);  /* the device's keys */
}

/* fill.Scalar / fill.Tensor: empty_like(self).fill_(value) */
tl_tensor *tl_native_fill_Scalar(tl_keyset ks, tl_tensor *self, tl_scalar value) {
    (void)ks;
    tl_tensor *r = tl_empty_like(self);
    if (r && r->device != TL_META && tl_fill_(r, value)) {
        tl_tensor_release(r);
        return NULL;
    }
    return r;
}

tl_tensor *tl_native_fill_Tensor(tl_keyset ks, tl_tensor *self, tl_tensor *value) {
    tl_tensor *r = tl_empty_like(self);
    if (!r) return NULL;
    tl_tensor *f = tl_native_fill__Tensor(ks, r, value);
    tl_tensor_release(r);
    return f;
}
