/* The FFT operators PyTorch's torch.fft is built on
 * (aten/src/ATen/native/mkl/SpectralOps.cpp): _fft_c2c, _fft_r2c, _fft_c2r.
 *
 * The data is converted once to a contiguous complex128 work tensor; each
 * transformed dimension's lines are gathered into a buffer, transformed by
 * fft_plan.c and scattered back, lines split across the thread pool. The
 * result is rounded to the precision of the input (complex64 / float32 for
 * float32 data). normalization is PyTorch's fft_norm_mode: 0 none, 1 by
 * 1/sqrt(n), 2 by 1/n, n the product of the signal sizes. */
#include <complex.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fft_plan.h"
#include "missing_ops.h"
#include "tl_autograd_formulas.h"
#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/_fft_c2c.h"
#include "ops/_fft_c2r.h"
#include "ops/_fft_r2c.h"
#include "ops/mul.h"
#include "ops/real.h"
#include "ops/view_as_real.h"

typedef struct {
    double _Complex *data;
    int64_t len, inner, nlines;
    const tl_fft_plan *plan;
    int forward;
    int failed;
} lines_ctx;

static void lines_fn(int64_t begin, int64_t end, void *p) {
    lines_ctx *c = p;
    const int64_t len = c->len, inner = c->inner;
    double _Complex *buf = malloc((size_t)(len + tl_fft_plan_scratch(c->plan)) * sizeof *buf);
    if (!buf) {
        __atomic_store_n(&c->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    double _Complex *work = buf + len;
    for (int64_t line = begin; line < end; line++) {
        const int64_t o = line / inner, i = line % inner;
        double _Complex *x = c->data + o * len * inner + i;
        if (inner == 1) {
            tl_fft_run(c->plan, x, work, c->forward);
            continue;
        }
        for (int64_t k = 0; k < len; k++) buf[k] = x[k * inner];
        tl_fft_run(c->plan, buf, work, c->forward);
        for (int64_t k = 0; k < len; k++) x[k * inner] = buf[k];
    }
    free(buf);
}

/* transforms every line of the contiguous complex128 tensor t along dim d in place */
static int transform_dim(tl_tensor *t, int64_t d, int forward) {
    const int64_t len = t->sizes[d];
    if (len <= 1 || tl_tensor_numel(t) == 0) return 0;
    int64_t inner = 1, outer = 1;
    for (int64_t i = d + 1; i < t->ndim; i++) inner *= t->sizes[i];
    for (int64_t i = 0; i < d; i++) outer *= t->sizes[i];
    tl_fft_plan *plan = tl_fft_plan_get(len);
    if (!plan) return -1;
    lines_ctx c = {tl_tensor_data_ptr(t), len, inner, outer * inner, plan, forward, 0};
    int64_t grain = (1 << 15) / len;
    tl_parallel_for(c.nlines, grain < 1 ? 1 : grain, lines_fn, &c);
    tl_fft_plan_release(plan);
    if (c.failed) return tl_set_error(TL_ERR_MEMORY, "fft: not enough memory for the line buffers");
    return 0;
}

static void scale(tl_tensor *t, double f) {
    if (f == 1.0) return;
    double _Complex *x = tl_tensor_data_ptr(t);
    const int64_t n = tl_tensor_numel(t);
    for (int64_t i = 0; i < n; i++) x[i] *= f;
}

static double norm_factor(int64_t normalization, double n) {
    return normalization == 1 ? 1.0 / sqrt(n) : normalization == 2 ? 1.0 / n : 1.0;
}

/* the wrapped, checked transform dims */
static int wrap_dims(const tl_tensor *self, const int64_t *dim, int64_t dim_len, int64_t *out) {
    for (int64_t i = 0; i < dim_len; i++) {
        out[i] = tl__wrap_dim(dim[i], self->ndim, 0);
        if (out[i] < 0) return -1;
    }
    return 0;
}

/* a contiguous complex128 copy of self (real data gets a zero imaginary part) */
static tl_tensor *work_copy(const tl_tensor *self) {
    tl_tensor *w = tl_to_dtype(self, TL_COMPLEX128, 1);
    if (!w) return NULL;
    tl_tensor *c = tl_contiguous(w);
    tl_tensor_release(w);
    return c;
}

/* rounds the work tensor to dtype (a new tensor) and releases it */
static tl_tensor *finish(tl_tensor *w, tl_dtype dt) {
    if (!w) return NULL;
    tl_tensor *r = tl_to_dtype(w, dt, 0);
    tl_tensor_release(w);
    return r;
}

static int check_cpu(const tl_tensor *self, const char *op) {
    if (tl__device_of(self) != TL_CPU)
        return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "%s: only CPU tensors are supported", op);
    return 0;
}

tl_tensor *tl_native__fft_c2c_cpu(tl_keyset ks, tl_tensor *self, const int64_t *dim, int64_t dim_len,
                                  int64_t normalization, bool forward) {
    (void)ks;
    if (!tl_dtype_is_complex(self->dtype)) {
        tl_set_error(TL_ERR_RUNTIME, "_fft_c2c: expected a complex input tensor, got %s",
                     tl_dtype_scalar_name(self->dtype));
        return NULL;
    }
    int64_t dims[TL_MAX_DIMS];
    if (dim_len > TL_MAX_DIMS || wrap_dims(self, dim, dim_len, dims) || check_cpu(self, "_fft_c2c")) return NULL;
    tl_tensor *w = work_copy(self);
    if (!w) return NULL;
    double n = 1;
    for (int64_t i = 0; i < dim_len; i++) {
        n *= (double)self->sizes[dims[i]];
        if (transform_dim(w, dims[i], forward)) {
            tl_tensor_release(w);
            return NULL;
        }
    }
    scale(w, norm_factor(normalization, n));
    return finish(w, self->dtype);
}

tl_tensor *tl_native__fft_r2c_cpu(tl_keyset ks, tl_tensor *self, const int64_t *dim, int64_t dim_len,
                                  int64_t normalization, bool onesided) {
    (void)ks;
    if (!tl_dtype_is_floating(self->dtype) || self->dtype == TL_FLOAT16 || self->dtype == TL_BFLOAT16) {
        tl_set_error(TL_ERR_RUNTIME, "_fft_r2c: expected a float or double input tensor, got %s",
                     tl_dtype_scalar_name(self->dtype));
        return NULL;
    }
    int64_t dims[TL_MAX_DIMS];
    if (dim_len < 1 || dim_len > TL_MAX_DIMS || wrap_dims(self, dim, dim_len, dims) || check_cpu(self, "_fft_r2c"))
        return NULL;
    tl_tensor *w = work_copy(self);
    if (!w) return NULL;
    const int64_t last = dims[dim_len - 1];
    double n = 1;
    for (int64_t i = 0; i < dim_len; i++) n *= (double)self->sizes[dims[i]];
    /* the last dim first: the others then transform only the half kept */
    if (transform_dim(w, last, 1)) goto fail;
    if (onesided) {
        tl_tensor *half = tl_narrow(w, last, 0, self->sizes[last] / 2 + 1);
        tl_tensor *hc = half ? tl_contiguous(half) : NULL;
        tl_tensor_release(half);
        tl_tensor_release(w);
        w = hc;
        if (!w) return NULL;
    }
    for (int64_t i = 0; i < dim_len - 1; i++)
        if (transform_dim(w, dims[i], 1)) goto fail;
    scale(w, norm_factor(normalization, n));
    return finish(w, tl_dtype_to_complex(self->dtype));
fail:
    tl_tensor_release(w);
    return NULL;
}

/* the full Hermitian spectrum of length n along dim d from the half in w:
 * X[k] = w[k] for k <= n/2 (0 past w's end), X[n - k] = conj(X[k]) */
static tl_tensor *hermitian_full(const tl_tensor *w, int64_t d, int64_t n) {
    int64_t sizes[TL_MAX_DIMS];
    memcpy(sizes, w->sizes, (size_t)w->ndim * sizeof *sizes);
    sizes[d] = n;
    tl_tensor *full = tl_zeros(w->ndim, sizes, TL_COMPLEX128, TL_CPU);
    if (!full) return NULL;
    int64_t inner = 1, outer = 1;
    for (int64_t i = d + 1; i < w->ndim; i++) inner *= w->sizes[i];
    for (int64_t i = 0; i < d; i++) outer *= w->sizes[i];
    const int64_t h = w->sizes[d], keep = h < n / 2 + 1 ? h : n / 2 + 1;
    const double _Complex *src = tl_tensor_data_ptr(w);
    double _Complex *dst = tl_tensor_data_ptr(full);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            const double _Complex *s = src + o * h * inner + i;
            double _Complex *x = dst + o * n * inner + i;
            for (int64_t k = 0; k < keep; k++) x[k * inner] = s[k * inner];
            for (int64_t k = n / 2 + 1; k < n; k++) x[k * inner] = conj(x[(n - k) * inner]);
        }
    return full;
}

tl_tensor *tl_native__fft_c2r_cpu(tl_keyset ks, tl_tensor *self, const int64_t *dim, int64_t dim_len,
                                  int64_t normalization, int64_t last_dim_size) {
    (void)ks;
    if (!tl_dtype_is_complex(self->dtype)) {
        tl_set_error(TL_ERR_RUNTIME, "_fft_c2r: expected a complex input tensor, got %s",
                     tl_dtype_scalar_name(self->dtype));
        return NULL;
    }
    if (last_dim_size < 1) {
        tl_set_error(TL_ERR_RUNTIME, "Invalid number of data points (%lld) specified", (long long)last_dim_size);
        return NULL;
    }
    int64_t dims[TL_MAX_DIMS];
    if (dim_len < 1 || dim_len > TL_MAX_DIMS || wrap_dims(self, dim, dim_len, dims) || check_cpu(self, "_fft_c2r"))
        return NULL;
    tl_tensor *w = work_copy(self);
    if (!w) return NULL;
    const int64_t last = dims[dim_len - 1];
    double n = (double)last_dim_size;
    for (int64_t i = 0; i < dim_len - 1; i++) {
        n *= (double)self->sizes[dims[i]];
        if (transform_dim(w, dims[i], 0)) goto fail;
    }
    tl_tensor *full = hermitian_full(w, last, last_dim_size);
    tl_tensor_release(w);
    w = full;
    if (!w || transform_dim(w, last, 0)) goto fail;
    scale(w, norm_factor(normalization, n));
    /* the real parts: a float64 view of every other double, rounded to the output dtype */
    int64_t strides[TL_MAX_DIMS];
    for (int64_t i = 0; i < w->ndim; i++) strides[i] = 2 * w->strides[i];
    tl_tensor *re = tl_tensor_new_with_storage(tl_tensor_storage(w), 2 * w->storage_offset, w->ndim, w->sizes,
                                               strides, TL_FLOAT64);
    tl_tensor_release(w);
    if (!re) return NULL;
    tl_tensor *r = tl_to_dtype(re, tl_dtype_to_real(self->dtype), 1);
    tl_tensor_release(re);
    return r;
fail:
    tl_tensor_release(w);
    return NULL;
}

/* ------------------------------------------------ out= variants */
/* PyTorch's _fft_*_mkl_out: the transform, then resize_output and copy_
 * (which casts: a float32 input may fill a complex128 out). */
tl_tensor *tl_native__fft_c2c_cpu_out(tl_keyset ks, tl_tensor *self, const int64_t *dim, int64_t dim_len,
                                      int64_t normalization, bool forward, tl_tensor *out) {
    return tl_missing_cast_to_out(tl_native__fft_c2c_cpu(ks, self, dim, dim_len, normalization, forward), out);
}

tl_tensor *tl_native__fft_r2c_cpu_out(tl_keyset ks, tl_tensor *self, const int64_t *dim, int64_t dim_len,
                                      int64_t normalization, bool onesided, tl_tensor *out) {
    return tl_missing_cast_to_out(tl_native__fft_r2c_cpu(ks, self, dim, dim_len, normalization, onesided), out);
}

tl_tensor *tl_native__fft_c2r_cpu_out(tl_keyset ks, tl_tensor *self, const int64_t *dim, int64_t dim_len,
                                      int64_t normalization, int64_t last_dim_size, tl_tensor *out) {
    return tl_missing_cast_to_out(tl_native__fft_c2r_cpu(ks, self, dim, dim_len, normalization, last_dim_size), out);
}

/* ------------------------------------------------ derivative helpers */
tl_tensor *tl_ag_fft_r2c_backward(tl_tensor *grad, const int64_t *dim, int64_t dim_len, int64_t normalization,
                                  bool onesided, int64_t last_dim_size) {
    tl_tensor *full = grad;
    tl_tensor_retain(grad);
    if (onesided) {
        const int64_t last = tl__wrap_dim(dim[dim_len - 1], grad->ndim, 0);
        if (last < 0) goto fail;
        const int64_t zero_length = last_dim_size - grad->sizes[last];
        if (zero_length > 0) {
            int64_t sizes[TL_MAX_DIMS];
            memcpy(sizes, grad->sizes, (size_t)grad->ndim * sizeof *sizes);
            sizes[last] = last_dim_size;
            tl_tensor *z = tl_zeros(grad->ndim, sizes, grad->dtype, tl__device_of(grad));
            tl_tensor *head = z ? tl_narrow(z, last, 0, grad->sizes[last]) : NULL;
            const int rc = head ? tl_copy_(head, grad) : -1;
            tl_tensor_release(head);
            tl_tensor_release(full);
            full = z;
            if (rc) goto fail;
        }
    }
    tl_tensor *c = tl_ops__fft_c2c(full, dim, dim_len, normalization, false);
    tl_tensor_release(full);
    if (!c) return NULL;
    tl_tensor *r = tl_ops_real(c);
    tl_tensor_release(c);
    return r;
fail:
    tl_tensor_release(full);
    return NULL;
}

tl_tensor *tl_ag_fft_c2r_backward(tl_tensor *grad, const int64_t *dim, int64_t dim_len, int64_t normalization) {
    tl_tensor *gI = tl_ops__fft_r2c(grad, dim, dim_len, normalization, true);
    if (!gI) return NULL;
    const int64_t last = tl__wrap_dim(dim[dim_len - 1], grad->ndim, 0);
    const int64_t double_length = last < 0 ? 0 : grad->sizes[last] - gI->sizes[last];
    if (double_length > 0) {   /* the bins the half spectrum stands for twice */
        tl_tensor *mid = tl_narrow(gI, last, 1, double_length);
        tl_tensor *re = mid ? tl_ops_view_as_real(mid) : NULL;
        tl_tensor *r = re ? tl_ops_mul__Scalar(re, tl_scalar_from_int(2)) : NULL;
        tl_tensor_release(r);
        tl_tensor_release(re);
        tl_tensor_release(mid);
        if (!r) {
            tl_tensor_release(gI);
            return NULL;
        }
    }
    return gI;
}
