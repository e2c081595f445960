/* Complex dtypes (aten/src/ATen/native/TensorShape.cpp, ComplexHelper.h,
 * TensorFactories.cpp, UnaryOps.cpp): view_as_real / view_as_complex (views
 * that reinterpret a complex element as two reals of its value type), real /
 * imag (a select of view_as_real), conj / conj_physical of complex tensors,
 * complex(real, imag), polar(abs, angle) and angle.
 *
 * torchlet has no lazy conjugate bit: conj of a complex tensor returns a new
 * tensor holding the conjugate (conj_physical), and resolve_conj is the
 * identity. The messages are PyTorch's. */
#include <complex.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "complex_ops.h"
#include "tl_autograd_formulas.h"
#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/abs.h"
#include "ops/add.h"
#include "ops/angle.h"
#include "ops/broadcast_tensors.h"
#include "ops/complex.h"
#include "ops/cos.h"
#include "ops/div.h"
#include "ops/eq.h"
#include "ops/hypot.h"
#include "ops/imag.h"
#include "ops/isnan.h"
#include "ops/logical_or.h"
#include "ops/masked_fill.h"
#include "ops/mul.h"
#include "ops/neg.h"
#include "ops/polar.h"
#include "ops/real.h"
#include "ops/select.h"
#include "ops/sin.h"
#include "ops/sqrt.h"
#include "ops/stack.h"
#include "ops/sub.h"
#include "ops/view_as_complex.h"
#include "ops/view_as_real.h"
#include "ops/zeros_like.h"

/* a tensor over t's storage with new geometry and dtype (no autograd: the
 * generated autograd kernels record the views) */
static tl_tensor *reinterpret(const tl_tensor *t, int64_t offset, int64_t nd, const int64_t *sizes,
                              const int64_t *strides, tl_dtype dt) {
    return tl_tensor_new_with_storage(tl_tensor_storage(t), offset, nd, sizes, strides, dt);
}

tl_tensor *tl_native_view_as_real(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    if (!tl_dtype_is_complex(self->dtype)) {
        tl_set_error(TL_ERR_RUNTIME, "view_as_real is only supported for complex tensors");
        return NULL;
    }
    int64_t sz[TL_MAX_DIMS], st[TL_MAX_DIMS];
    const int64_t nd = self->ndim;
    if (nd + 1 > TL_MAX_DIMS) {
        tl_set_error(TL_ERR_RUNTIME, "view_as_real: too many dimensions");
        return NULL;
    }
    for (int64_t i = 0; i < nd; i++) {
        sz[i] = self->sizes[i];
        st[i] = self->strides[i] * 2;
    }
    sz[nd] = 2;
    st[nd] = 1;
    return reinterpret(self, self->storage_offset * 2, nd + 1, sz, st, tl_dtype_to_real(self->dtype));
}

tl_tensor *tl_native_view_as_complex(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    const tl_dtype dt = self->dtype;
    if (dt != TL_FLOAT32 && dt != TL_FLOAT64) {
        if (dt == TL_FLOAT16)   /* PyTorch gives ComplexHalf, a dtype torchlet does not have */
            tl_set_error(TL_ERR_NOT_IMPLEMENTED, "view_as_complex: ComplexHalf tensors are not supported");
        else
            tl_set_error(TL_ERR_RUNTIME, "view_as_complex is only supported for half, float and double tensors, "
                                         "but got a tensor of scalar type: %s", tl_dtype_scalar_name(dt));
        return NULL;
    }
    const int64_t nd = self->ndim;
    if (nd == 0) {
        tl_set_error(TL_ERR_RUNTIME, "Input tensor must have one or more dimensions");
        return NULL;
    }
    if (self->sizes[nd - 1] != 2) {
        tl_set_error(TL_ERR_RUNTIME, "Tensor must have a last dimension of size 2");
        return NULL;
    }
    if (self->strides[nd - 1] != 1) {
        tl_set_error(TL_ERR_RUNTIME, "Tensor must have a last dimension with stride 1");
        return NULL;
    }
    int64_t sz[TL_MAX_DIMS], st[TL_MAX_DIMS];
    for (int64_t i = 0; i < nd - 1; i++) {
        if (self->strides[i] % 2 != 0) {
            tl_set_error(TL_ERR_RUNTIME, "Tensor must have a stride divisible by 2 for all but last dimension");
            return NULL;
        }
        sz[i] = self->sizes[i];
        st[i] = self->strides[i] / 2;
    }
    if (self->storage_offset % 2 != 0) {
        tl_set_error(TL_ERR_RUNTIME, "Tensor must have a storage_offset divisible by 2");
        return NULL;
    }
    return reinterpret(self, self->storage_offset / 2, nd - 1, sz, st, tl_dtype_to_complex(dt));
}

tl_tensor *tl__complex_as_real(tl_tensor *t) { return tl_native_view_as_real(0, t); }

/* real / imag: a select of view_as_real (through the operators, so autograd
 * records view_as_real and select); real of a real tensor is the tensor */
static tl_tensor *component(tl_tensor *self, int64_t index) {
    tl_tensor *v = tl_ops_view_as_real(self);
    if (!v) return NULL;
    tl_tensor *r = tl_ops_select_int(v, -1, index);
    tl_tensor_release(v);
    return r;
}

tl_tensor *tl__complex_real(tl_tensor *self) { return component(self, 0); }

tl_tensor *tl_native_imag(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    if (!tl_dtype_is_complex(self->dtype)) {
        tl_set_error(TL_ERR_RUNTIME, "imag is not implemented for tensors with non-complex dtypes.");
        return NULL;
    }
    return component(self, 1);
}

static tl_tensor *parts_op(tl_tensor *t, int isnan) {
    tl_tensor *re = component(t, 0), *im = re ? component(t, 1) : NULL;
    tl_tensor *a = NULL, *b = NULL, *r = NULL;
    if (im && isnan && (a = tl_ops_isnan(re)) && (b = tl_ops_isnan(im))) r = tl_ops_logical_or(a, b);
    if (im && !isnan) r = tl_ops_hypot(re, im);
    tl_tensor *tmp[] = {re, im, a, b};
    for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++) tl_tensor_release(tmp[i]);
    return r;
}

tl_tensor *tl__abs_any(tl_tensor *t) { return tl_dtype_is_complex(t->dtype) ? parts_op(t, 0) : tl_ops_abs(t); }
tl_tensor *tl__isnan_any(tl_tensor *t) { return tl_dtype_is_complex(t->dtype) ? parts_op(t, 1) : tl_ops_isnan(t); }

/* the conjugate as a new tensor: [re, -im] stacked and viewed as complex */
tl_tensor *tl__complex_conj_physical(tl_tensor *self) {
    tl_tensor *re = component(self, 0), *im = re ? component(self, 1) : NULL;
    tl_tensor *nim = im ? tl_ops_neg(im) : NULL;
    tl_tensor *parts[2] = {re, nim};
    tl_tensor *st = nim ? tl_ops_stack(parts, 2, -1) : NULL;
    tl_tensor *r = st ? tl_ops_view_as_complex(st) : NULL;
    tl_tensor_release(st);
    tl_tensor_release(nim);
    tl_tensor_release(im);
    tl_tensor_release(re);
    return r;
}

/* PyTorch's complex_check_dtype */
static int check_parts(const tl_tensor *a, const tl_tensor *b) {
    const tl_dtype da = a->dtype, db = b->dtype;
    const bool ok_a = da == TL_FLOAT16 || da == TL_FLOAT32 || da == TL_FLOAT64;
    const bool ok_b = db == TL_FLOAT16 || db == TL_FLOAT32 || db == TL_FLOAT64;
    if (!ok_a || !ok_b)
        return tl_set_error(TL_ERR_RUNTIME, "Expected both inputs to be Half, Float or Double tensors but got %s and %s",
                            tl_dtype_scalar_name(da), tl_dtype_scalar_name(db));
    if (da != db)
        return tl_set_error(TL_ERR_RUNTIME, "Expected object of scalar type %s but got scalar type %s for second "
                            "argument", tl_dtype_scalar_name(da), tl_dtype_scalar_name(db));
    if (da == TL_FLOAT16)
        return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "complex: ComplexHalf tensors are not supported");
    return 0;
}

/* re + im*j from two real tensors of one dtype (broadcast): a fresh tensor
 * over the storage of stack([re, im], -1) */
static tl_tensor *from_parts(tl_tensor *re, tl_tensor *im) {
    tl_tensor *in[2] = {re, im};
    tl_tensor **b = NULL;
    int64_t nb = 0;
    if (tl_ops_broadcast_tensors(in, 2, &b, &nb) != 0) return NULL;
    tl_tensor *st = tl_ops_stack(b, nb, -1);
    for (int64_t i = 0; i < nb; i++) tl_tensor_release(b[i]);
    free(b);
    if (!st) return NULL;
    const int64_t nd = st->ndim - 1;
    int64_t strides[TL_MAX_DIMS];
    for (int64_t i = 0; i < nd; i++) strides[i] = st->strides[i] / 2;
    tl_tensor *r = reinterpret(st, st->storage_offset / 2, nd, st->sizes, strides, tl_dtype_to_complex(st->dtype));
    tl_tensor_release(st);
    return r;
}

tl_tensor *tl_native_complex(tl_keyset ks, tl_tensor *real, tl_tensor *imag) {
    (void)ks;
    if (check_parts(real, imag) != 0) return NULL;
    return from_parts(real, imag);
}

tl_tensor *tl_native_polar(tl_keyset ks, tl_tensor *abs, tl_tensor *angle) {
    (void)ks;
    if (check_parts(abs, angle) != 0) return NULL;
    tl_tensor *c = tl_ops_cos(angle), *s = c ? tl_ops_sin(angle) : NULL;
    tl_tensor *re = s ? tl_ops_mul_Tensor(abs, c) : NULL, *im = re ? tl_ops_mul_Tensor(abs, s) : NULL;
    tl_tensor *r = im ? from_parts(re, im) : NULL;
    tl_tensor_release(im);
    tl_tensor_release(re);
    tl_tensor_release(s);
    tl_tensor_release(c);
    return r;
}

/* angle: arg(z) of complex values; of reals pi for negatives, 0 otherwise,
 * NaN kept (integers and bool compute in the default float dtype) */
#define ANGLE_REAL_LOOP(T)                                                                    \
    do {                                                                                      \
        const T *x = (const T *)tl_tensor_data_ptr(in);                                       \
        T *o = (T *)tl_tensor_data_ptr(out);                                                  \
        for (int64_t i = 0; i < n; i++) o[i] = x[i] != x[i] ? x[i] : (x[i] < 0 ? (T)M_PI : (T)0); \
    } while (0)

tl_tensor *tl_native_angle(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    tl_dtype dt = self->dtype;
    if (dt == TL_FLOAT16 || dt == TL_BFLOAT16) {   /* computed in float32, rounded once */
        tl_tensor *f = tl_to_dtype(self, TL_FLOAT32, 0);
        tl_tensor *a = f ? tl_native_angle(ks, f) : NULL;
        tl_tensor *r = a ? tl_to_dtype(a, dt, 0) : NULL;
        tl_tensor_release(a);
        tl_tensor_release(f);
        return r;
    }
    if (!tl_dtype_is_complex(dt) && !tl_dtype_is_floating(dt)) dt = tl_get_default_dtype();
    const tl_dtype odt = tl_dtype_to_real(dt);
    tl_tensor *cast = tl_to_dtype(self, dt, 0);
    tl_tensor *in = cast ? tl_contiguous(cast) : NULL;
    tl_tensor_release(cast);
    if (!in) return NULL;
    tl_tensor *out = tl_empty(self->ndim, self->sizes, odt, tl__device_of(self));
    const int64_t n = out ? tl_tensor_numel(out) : 0;
    if (out && n > 0 && tl__device_of(self) == TL_CPU) {
        if (dt == TL_FLOAT32) {
            ANGLE_REAL_LOOP(float);
        } else if (dt == TL_FLOAT64) {
            ANGLE_REAL_LOOP(double);
        } else if (dt == TL_COMPLEX64) {
            const float *x = (const float *)tl_tensor_data_ptr(in);
            float *o = (float *)tl_tensor_data_ptr(out);
            for (int64_t i = 0; i < n; i++) o[i] = atan2f(x[2 * i + 1], x[2 * i]);
        } else {
            const double *x = (const double *)tl_tensor_data_ptr(in);
            double *o = (double *)tl_tensor_data_ptr(out);
            for (int64_t i = 0; i < n; i++) o[i] = atan2(x[2 * i + 1], x[2 * i]);
        }
    }
    tl_tensor_release(in);
    return out;
}

/* ------------------------------------------------ derivative helpers
 * (in real arithmetic on the parts: z = x + iy, g the incoming gradient) */

/* g * i z / |z|^2 = (-g y + i g x) / (x^2 + y^2), 0 where z == 0; a real self: zeros */
tl_tensor *tl_ag_angle_backward(tl_tensor *grad, tl_tensor *self) {
    if (!tl_dtype_is_complex(self->dtype))
        return tl_ops_zeros_like(self, TL_DTYPE_UNDEFINED, -1, -1, false, false, TL_PRESERVE_FORMAT);
    tl_tensor *x = tl_ops_real(self), *y = x ? tl_ops_imag(self) : NULL;
    tl_tensor *x2 = y ? tl_ops_mul_Tensor(x, x) : NULL, *y2 = x2 ? tl_ops_mul_Tensor(y, y) : NULL;
    tl_tensor *r2 = y2 ? tl_ops_add_Tensor(x2, y2, tl_scalar_from_int(1)) : NULL;
    tl_tensor *zero = r2 ? tl_ops_eq_Scalar(r2, tl_scalar_from_int(0)) : NULL;
    tl_tensor *safe = zero ? tl_ops_masked_fill_Scalar(r2, zero, tl_scalar_from_int(1)) : NULL;
    tl_tensor *gx = safe ? tl_ops_mul_Tensor(grad, x) : NULL, *gy = gx ? tl_ops_mul_Tensor(grad, y) : NULL;
    tl_tensor *re0 = gy ? tl_ops_div_Tensor(gy, safe) : NULL, *im0 = re0 ? tl_ops_div_Tensor(gx, safe) : NULL;
    tl_tensor *re1 = im0 ? tl_ops_neg(re0) : NULL;
    tl_tensor *re = re1 ? tl_ops_masked_fill_Scalar(re1, zero, tl_scalar_from_int(0)) : NULL;
    tl_tensor *im = re ? tl_ops_masked_fill_Scalar(im0, zero, tl_scalar_from_int(0)) : NULL;
    tl_tensor *r = im ? tl_ops_complex(re, im) : NULL;
    tl_tensor *tmp[] = {x, y, x2, y2, r2, zero, safe, gx, gy, re0, im0, re1, re, im};
    for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++) tl_tensor_release(tmp[i]);
    return r;
}

/* result = u + iv, grad = a + ib: grad_abs = Re(conj(g) sgn(result)) = (a u + b v) / |result|
 * (0 where result == 0); grad_angle = Re(conj(g) i result) = b u - a v */
int tl_ag_polar_backward(tl_tensor *grad, tl_tensor *result, tl_tensor **grad_abs, tl_tensor **grad_angle) {
    *grad_abs = *grad_angle = NULL;
    tl_tensor *u = tl_ops_real(result), *v = u ? tl_ops_imag(result) : NULL;
    tl_tensor *a = v ? tl_ops_real(grad) : NULL, *b = a ? tl_ops_imag(grad) : NULL;
    tl_tensor *au = b ? tl_ops_mul_Tensor(a, u) : NULL, *bv = au ? tl_ops_mul_Tensor(b, v) : NULL;
    tl_tensor *bu = bv ? tl_ops_mul_Tensor(b, u) : NULL, *av = bu ? tl_ops_mul_Tensor(a, v) : NULL;
    tl_tensor *uu = av ? tl_ops_mul_Tensor(u, u) : NULL, *vv = uu ? tl_ops_mul_Tensor(v, v) : NULL;
    tl_tensor *r2 = vv ? tl_ops_add_Tensor(uu, vv, tl_scalar_from_int(1)) : NULL;
    tl_tensor *mag = r2 ? tl_ops_sqrt(r2) : NULL;
    tl_tensor *zero = mag ? tl_ops_eq_Scalar(mag, tl_scalar_from_int(0)) : NULL;
    tl_tensor *safe = zero ? tl_ops_masked_fill_Scalar(mag, zero, tl_scalar_from_int(1)) : NULL;
    tl_tensor *num = safe ? tl_ops_add_Tensor(au, bv, tl_scalar_from_int(1)) : NULL;
    tl_tensor *q = num ? tl_ops_div_Tensor(num, safe) : NULL;
    *grad_abs = q ? tl_ops_masked_fill_Scalar(q, zero, tl_scalar_from_int(0)) : NULL;
    *grad_angle = *grad_abs ? tl_ops_sub_Tensor(bu, av, tl_scalar_from_int(1)) : NULL;
    tl_tensor *tmp[] = {u, v, a, b, au, bv, bu, av, uu, vv, r2, mag, zero, safe, num, q};
    for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++) tl_tensor_release(tmp[i]);
    if (!*grad_angle) {
        tl_tensor_release(*grad_abs);
        *grad_abs = NULL;
        return -1;
    }
    return 0;
}
