/* max_unpool2d / max_unpool3d (CPU), PyTorch 2.13's checks and messages
 * (max_unpooling2d_forward_out_cpu, max_unpooling3d_shape_check): every
 * input element is written to the flat offset its index names inside its
 * output plane / volume (zeros elsewhere; of repeated indices the last
 * write wins, as PyTorch's serial loop). Elements are copied by size;
 * planes go to the thread pool, and an index
 * outside its plane is PyTorch's "Found an invalid max index". Floating
 * dtypes only, as PyTorch's dispatch. */
#include <stdint.h>
#include <string.h>

#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/max_unpool2d.h"
#include "ops/max_unpool3d.h"
#include "tl_tensor.h"
#include "nn_common.h"

typedef struct {
    const char *src;
    const int64_t *ind;
    char *dst;
    int64_t n_in, n_out, esz;
    int64_t bad; /* the first invalid index met (written once, by any thread) */
    int has_bad;
} unpool_ctx;

static void run_planes(int64_t b, int64_t e, void *ctx) {
    unpool_ctx *c = ctx;
    for (int64_t p = b; p < e; p++) {
        const char *s = c->src + p * c->n_in * c->esz;
        const int64_t *ix = c->ind + p * c->n_in;
        char *d = c->dst + p * c->n_out * c->esz;
        for (int64_t i = 0; i < c->n_in; i++) {
            const int64_t o = ix[i];
            if (o < 0 || o >= c->n_out) {
                if (!__atomic_exchange_n(&c->has_bad, 1, __ATOMIC_RELAXED)) c->bad = o;
                return;
            }
            memcpy(d + o * c->esz, s + i * c->esz, (size_t)c->esz);
        }
    }
}

static void fmt_sizes(char *buf, size_t n, const tl_tensor *t) { fmt_shape(buf, n, tl_tensor_sizes(t), tl_tensor_ndim(t)); }

/* checks shared by both: indices' dtype and shape, non-empty non-batch dims */
static int check_common(const tl_tensor *self, const tl_tensor *indices, const char *fn) {
    char a[256], b[256];
    const int64_t nd = tl_tensor_ndim(self);
    if (tl_tensor_ndim(indices) != nd ||
        memcmp(tl_tensor_sizes(indices), tl_tensor_sizes(self), (size_t)nd * sizeof(int64_t))) {
        fmt_sizes(a, sizeof a, self);
        fmt_sizes(b, sizeof b, indices);
        return tl_set_error(TL_ERR_RUNTIME, "Expected shape of indices to be same as that of the input tensor (%s) but "
                            "got indices tensor with shape: %s", a, b);
    }
    for (int64_t i = 1; i < nd; i++)
        if (tl_tensor_sizes(self)[i] <= 0) {
            fmt_sizes(a, sizeof a, self);
            return tl_set_error(TL_ERR_RUNTIME, "%s: Expected input to have non-zero size for non-batch dimensions, but "
                                "got %s with dimension %lld being empty.", fn, a, (long long)i);
        }
    return 0;
}

/* the unpooling of self (planes of the last `sd` dims) into output sizes os */
static tl_tensor *unpool(tl_tensor *self, tl_tensor *indices, const int64_t *os, int sd) {
    if (os[0] < 0 || os[1] < 0 || (sd == 3 && os[2] < 0)) {
        if (sd == 2)
            tl_set_error(TL_ERR_RUNTIME, "max_unpooling2d(): output_size must contain non-negative spatial dimensions, "
                         "but got output_size=(%lld, %lld)", (long long)os[0], (long long)os[1]);
        else
            tl_set_error(TL_ERR_RUNTIME, "max_unpooling3d(): output_size must contain non-negative spatial dimensions, "
                         "but got output_size=(%lld, %lld, %lld)", (long long)os[0], (long long)os[1],
                         (long long)os[2]);
        return NULL;
    }
    const int64_t nd = tl_tensor_ndim(self);
    int64_t shape[5], n_out = 1, n_in = 1, planes = 1;
    memcpy(shape, tl_tensor_sizes(self), (size_t)nd * sizeof(int64_t));
    for (int i = 0; i < sd; i++) {
        shape[nd - sd + i] = os[i];
        n_out *= os[i];
        n_in *= tl_tensor_sizes(self)[nd - sd + i];
    }
    for (int64_t i = 0; i < nd - sd; i++) planes *= shape[i];
    tl_tensor *x = tl_contiguous(self), *ix = x ? tl_contiguous(indices) : NULL;
    tl_tensor *y = ix ? tl_zeros(nd, shape, tl_tensor_dtype(self), TL_CPU) : NULL;
    if (y && n_out > 0 && n_in > 0 && planes > 0) {
        unpool_ctx c = {tl_tensor_data_ptr(x), tl_tensor_data_ptr(ix), tl_tensor_data_ptr(y), n_in, n_out,
                        tl__itemsize(tl_tensor_dtype(self)), 0, 0};
        const int64_t grain = 32768 / (n_in + n_out);
        tl_parallel_for(planes, grain > 0 ? grain : 1, run_planes, &c);
        if (c.has_bad) {
            if (sd == 2)
                tl_set_error(TL_ERR_RUNTIME, "Found an invalid max index: %lld (output volumes are of size %lldx%lld)",
                             (long long)c.bad, (long long)os[0], (long long)os[1]);
            else
                tl_set_error(TL_ERR_RUNTIME, "Found an invalid max index: %lld (output volumes are of size "
                             "%lldx%lldx%lld)", (long long)c.bad, (long long)os[0], (long long)os[1], (long long)os[2]);
            tl_tensor_release(y);
            y = NULL;
        }
    }
    tl_tensor_release(x);
    tl_tensor_release(ix);
    return y;
}

static int check_floating(const tl_tensor *self, const char *name) {
    if (tl_dtype_is_floating(tl_tensor_dtype(self))) return 0;
    return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", name,
                        tl_dtype_scalar_name(tl_tensor_dtype(self)));
}

static int check_long(const tl_tensor *indices, int with_type) {
    if (tl_tensor_dtype(indices) == TL_INT64) return 0;
    if (!with_type) return tl_set_error(TL_ERR_RUNTIME, "elements in indices should be type int64");
    return tl_set_error(TL_ERR_RUNTIME, "elements in indices should be type int64 but got: %s",
                        tl_dtype_caffe2_name(tl_tensor_dtype(indices)));
}

tl_tensor *tl_native_max_unpool2d_cpu(tl_keyset ks, tl_tensor *self, tl_tensor *indices, const int64_t *output_size,
                                      int64_t output_size_len) {
    (void)ks;
    if (check_long(indices, 1)) return NULL;
    if (output_size_len != 2) {
        tl_set_error(TL_ERR_RUNTIME, "There should be exactly two elements (height, width) in output_size, but got "
                     "%lld elements.", (long long)output_size_len);
        return NULL;
    }
    const int64_t nd = tl_tensor_ndim(self);
    if (nd != 3 && nd != 4) {
        tl_set_error(TL_ERR_RUNTIME, "Input to max_unpooling2d should be a 3d or 4d Tensor, but got a tensor with %lld "
                     "dimensions.", (long long)nd);
        return NULL;
    }
    if (check_common(self, indices, "max_unpooling2d_forward_out_cpu()") || check_floating(self, "max_unpool2d"))
        return NULL;
    return unpool(self, indices, output_size, 2);
}

tl_tensor *tl_native_max_unpool3d_cpu(tl_keyset ks, tl_tensor *self, tl_tensor *indices, const int64_t *output_size,
                                      int64_t output_size_len, const int64_t *stride, int64_t stride_len,
                                      const int64_t *padding, int64_t padding_len) {
    (void)ks;
    (void)padding;
    const int64_t nd = tl_tensor_ndim(self);
    if (check_long(indices, 0)) return NULL;
    if (nd != 4 && nd != 5) {
        tl_set_error(TL_ERR_RUNTIME, "Input to max_unpooling3d should be a 4d or 5d Tensor, but got a tensor with %lld "
                     "dimensions.", (long long)nd);
        return NULL;
    }
    if (output_size_len != 3 || stride_len != 3 || padding_len != 3) {
        const char *what = output_size_len != 3 ? "output_size, but got " : stride_len != 3 ? "stride, but got: "
                                                                                             : "padding, but got: ";
        const int64_t n = output_size_len != 3 ? output_size_len : stride_len != 3 ? stride_len : padding_len;
        tl_set_error(TL_ERR_RUNTIME, "There should be exactly three elements (depth, height, width) in %s%lld "
                     "elements.", what, (long long)n);
        return NULL;
    }
    if (check_common(self, indices, "max_unpooling3d_forward_out_cpu()") || check_floating(self, "max_unpool3d"))
        return NULL;
    if (stride[0] <= 0 || stride[1] <= 0 || stride[2] <= 0) {
        char a[128];
        fmt_shape(a, sizeof a, stride, 3);
        tl_set_error(TL_ERR_RUNTIME, "strides should be greater than zero, but got stride: %s", a);
        return NULL;
    }
    return unpool(self, indices, output_size, 3);
}
