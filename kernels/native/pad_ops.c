/* Padding: constant_pad_nd (CompositeExplicitAutograd, as PyTorch: a
 * filled tensor and a copy of the input into its interior; negative pads
 * narrow), reflection_pad1d/2d/3d, replication_pad1d/2d/3d and their backward
 * ops.
 *
 * Reflection / replication map every output position of a plane to one
 * input position (reflect: -i below 0, 2 (n - 1) - i past the end;
 * replicate: clamp), so the forward copies elements of any dtype by size
 * and the backward adds each output gradient into its source (float32 /
 * float64 accumulation, float16 / bfloat16 through float32). The N * C
 * planes go to threads; a plane's gradient stays in its own input plane.
 * Checks and messages as PyTorch 2.13's (aten/src/ATen/native/Padding.h). */
#include <stdlib.h>
#include <string.h>

#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/clone.h"
#include "ops/constant_pad_nd.h"
#include "ops/narrow.h"
#include "ops/new_full.h"
#include "ops/reflection_pad1d.h"
#include "ops/reflection_pad1d_backward.h"
#include "ops/reflection_pad2d.h"
#include "ops/reflection_pad2d_backward.h"
#include "ops/reflection_pad3d.h"
#include "ops/reflection_pad3d_backward.h"
#include "ops/replication_pad1d.h"
#include "ops/replication_pad1d_backward.h"
#include "ops/replication_pad2d.h"
#include "ops/replication_pad2d_backward.h"
#include "ops/replication_pad3d.h"
#include "ops/replication_pad3d_backward.h"
#include "tl_runtime.h"
#include "tl_tensor.h"
#include "nn_common.h"

enum { MAXD = 64 };

/* ------------------------------------------------------------ constant_pad_nd */

tl_tensor *tl_native_constant_pad_nd(tl_keyset ks, tl_tensor *self, const int64_t *pad, int64_t pad_len,
                                     tl_scalar value) {
    (void)ks;
    if (pad_len % 2) {
        tl_set_error(TL_ERR_RUNTIME, "Length of pad must be even but instead it equals %lld", (long long)pad_len);
        return NULL;
    }
    const int64_t nd = tl_tensor_ndim(self), l_pad = pad_len / 2, l_diff = nd - l_pad;
    if (l_diff < 0) {
        tl_set_error(TL_ERR_RUNTIME, "Length of pad should be no more than twice the number of dimensions of the "
                                     "input. Pad length is %lldwhile the input has %llddimensions.", (long long)pad_len,
                     (long long)nd);
        return NULL;
    }
    const int64_t *sz = tl_tensor_sizes(self);
    int all_non_positive = 1;
    for (int64_t i = 0; i < pad_len; i++) all_non_positive &= pad[i] <= 0;
    /* the input narrowed by the negative pads (dims from the last) */
    tl_tensor *x = self;
    tl_tensor_retain(x);
    for (int64_t i = 0; i < l_pad && x; i++) {
        const int64_t dim = nd - 1 - i, lo = pad[2 * i], hi = pad[2 * i + 1];
        if (lo >= 0 && hi >= 0) continue;
        const int64_t start = lo < 0 ? -lo : 0;
        const int64_t len = tl_tensor_sizes(x)[dim] - start + (hi < 0 ? hi : 0);
        tl_tensor *n = tl_ops_narrow(x, dim, start, len);
        tl_tensor_release(x);
        x = n;
    }
    if (!x) return NULL;
    if (all_non_positive) {
        tl_tensor *r = tl_ops_clone(x, -1);
        tl_tensor_release(x);
        return r;
    }
    int64_t shape[MAXD];
    memcpy(shape, sz, (size_t)nd * sizeof(int64_t));
    for (int64_t i = 0; i < l_pad; i++) {
        const int64_t d = l_diff + i, pi = pad_len - (i + 1) * 2;
        shape[d] = sz[d] + pad[pi] + pad[pi + 1];
        if (shape[d] < 0) {
            tl_set_error(TL_ERR_RUNTIME, "The input size %lld, plus negative padding %lld and %lld resulted in a "
                                         "negative output size, which is invalid. Check dimension %lld of your input.",
                         (long long)sz[d], (long long)pad[pi], (long long)pad[pi + 1], (long long)d);
            tl_tensor_release(x);
            return NULL;
        }
    }
    tl_tensor *out = tl_ops_new_full(self, shape, nd, value, TL_DTYPE_UNDEFINED, -1, -1, false, false);
    tl_tensor *view = out;
    if (view) tl_tensor_retain(view);
    for (int64_t i = 0; i < l_pad && view; i++) {
        const int64_t dim = nd - 1 - i, lo = pad[2 * i] > 0 ? pad[2 * i] : 0;
        tl_tensor *n = tl_ops_narrow(view, dim, lo, tl_tensor_sizes(x)[dim]);
        tl_tensor_release(view);
        view = n;
    }
    const int rc = view ? tl_copy_(view, x) : -1;
    tl_tensor_release(view);
    tl_tensor_release(x);
    if (rc) {
        tl_tensor_release(out);
        return NULL;
    }
    return out;
}

/* ------------------------------------------------------------ reflection / replication */

enum { REFLECT, REPLICATE };

static inline int64_t src_index(int64_t o, int64_t pad, int64_t n, int mode) {
    int64_t i = o - pad;
    if (mode == REPLICATE) return i < 0 ? 0 : i >= n ? n - 1 : i;
    if (i < 0) i = -i;
    if (i >= n) i = 2 * (n - 1) - i;
    return i;
}

typedef struct {
    const char *src;
    char *dst;
    int64_t id, ih, iw, od, oh, ow, pf, pt, pl, isz; /* depth / height are 1 (no pad) below 3-d / 2-d */
    int mode;
    tl_dtype ct; /* backward: the accumulation dtype */
} pad_ctx;

static void pad_fwd_planes(int64_t b, int64_t e, void *ctx) {
    const pad_ctx *c = ctx;
    for (int64_t p = b; p < e; p++) {
        const char *s = c->src + p * c->id * c->ih * c->iw * c->isz;
        char *d = c->dst + p * c->od * c->oh * c->ow * c->isz;
        for (int64_t z = 0; z < c->od; z++) {
            const char *sz = s + src_index(z, c->pf, c->id, c->mode) * c->ih * c->iw * c->isz;
            for (int64_t y = 0; y < c->oh; y++) {
                const char *row = sz + src_index(y, c->pt, c->ih, c->mode) * c->iw * c->isz;
                char *o = d + (z * c->oh + y) * c->ow * c->isz;
                if (c->isz == 4)
                    for (int64_t x = 0; x < c->ow; x++)
                        ((uint32_t *)o)[x] = ((const uint32_t *)row)[src_index(x, c->pl, c->iw, c->mode)];
                else
                    for (int64_t x = 0; x < c->ow; x++)
                        memcpy(o + x * c->isz, row + src_index(x, c->pl, c->iw, c->mode) * c->isz, (size_t)c->isz);
            }
        }
    }
}

static void pad_bwd_planes(int64_t b, int64_t e, void *ctx) {
    const pad_ctx *c = ctx;
    for (int64_t p = b; p < e; p++) {
        for (int64_t z = 0; z < c->od; z++) {
            const int64_t sz = p * c->id + src_index(z, c->pf, c->id, c->mode);
            for (int64_t y = 0; y < c->oh; y++) {
                const int64_t sy = sz * c->ih + src_index(y, c->pt, c->ih, c->mode);
                for (int64_t x = 0; x < c->ow; x++) {
                    const int64_t si = sy * c->iw + src_index(x, c->pl, c->iw, c->mode);
                    const int64_t gi = ((p * c->od + z) * c->oh + y) * c->ow + x;
                    if (c->ct == TL_FLOAT64)
                        ((double *)c->dst)[si] += ((const double *)c->src)[gi];
                    else
                        ((float *)c->dst)[si] += ((const float *)c->src)[gi];
                }
            }
        }
    }
}

/* PyTorch's 3-d size checks (ReflectionPad.cpp / ReplicationPadding.cpp
 * meta functions): reflection's pads below each size (W, H, D in turn),
 * then an output empty in every dim refused. */
static int pad_geom3(const tl_tensor *input, const int64_t *padding, int mode, pad_ctx *c, const char *a) {
    const int64_t nd = tl_tensor_ndim(input);
    const int64_t pr = padding[1], pb = padding[3], pk = padding[5];
    if (mode == REFLECT) {
        const int64_t lo[3] = {c->pl, c->pt, c->pf}, hi[3] = {pr, pb, pk}, n[3] = {c->iw, c->ih, c->id};
        for (int i = 0; i < 3; i++)
            if (!(lo[i] < n[i] && hi[i] < n[i]))
                return tl_set_error(TL_ERR_RUNTIME, "Argument #%d: Padding size should be less than the corresponding "
                                                    "input dimension, but got: padding (%lld, %lld) at dimension %lld "
                                                    "of input %s", 4 + 2 * i, (long long)lo[i], (long long)hi[i],
                                    (long long)(nd - 1 - i), a);
    }
    c->ow = c->iw + c->pl + pr;
    c->oh = c->ih + c->pt + pb;
    c->od = c->id + c->pf + pk;
    if (c->ow < 1 && c->oh < 1 && c->od < 1)
        return tl_set_error(TL_ERR_RUNTIME, "input (D: %lld H: %lld, W: %lld) is too small. Calculated output D: %lld "
                                            "H: %lld W: %lld", (long long)c->id, (long long)c->ih, (long long)c->iw,
                            (long long)c->od, (long long)c->oh, (long long)c->ow);
    return 0;
}

/* PyTorch's padding::check_valid_input<dim> and the per-mode size checks;
 * fills the plane geometry (dims below `dim` have size 1 and no pad) */
static int pad_geom(const tl_tensor *input, const int64_t *padding, int64_t plen, int dim, int mode, pad_ctx *c) {
    char a[256];
    if (plen != 2 * dim) {
        if (dim == 3 && mode == REPLICATE) /* replication_pad3d's message names no size */
            return tl_set_error(TL_ERR_RUNTIME, "padding size is expected to be 6");
        return tl_set_error(TL_ERR_RUNTIME, "padding size is expected to be %d, but got: %lld", 2 * dim,
                            (long long)plen);
    }
    const int64_t nd = tl_tensor_ndim(input);
    const int64_t *sz = tl_tensor_sizes(input);
    int valid = nd == dim + 2 || nd == dim + 1;
    for (int64_t d = nd == dim + 2 ? 1 : 0; d < nd && valid; d++) valid = sz[d] != 0;
    fmt_shape(a, sizeof a, sz, nd);
    if (!valid)
        return tl_set_error(TL_ERR_RUNTIME, "Expected %dD or %dD (batch mode) tensor with possibly 0 batch size and "
                                            "other non-zero dimensions for input, but got: %s", dim + 1, dim + 2, a);
    c->iw = sz[nd - 1];
    c->ih = dim >= 2 ? sz[nd - 2] : 1;
    c->id = dim == 3 ? sz[nd - 3] : 1;
    c->pl = padding[0];
    c->pt = dim >= 2 ? padding[2] : 0;
    c->pf = dim == 3 ? padding[4] : 0;
    c->od = c->id;
    if (dim == 3) return pad_geom3(input, padding, mode, c, a);
    const int64_t pr = padding[1], pb = dim == 2 ? padding[3] : 0;
    if (mode == REFLECT) {
        if (!(c->pl < c->iw && pr < c->iw))
            return tl_set_error(TL_ERR_RUNTIME, "Argument #4: Padding size should be less than the corresponding input "
                                                "dimension, but got: padding (%lld, %lld) at dimension %lld of input %s",
                                (long long)c->pl, (long long)pr, (long long)(nd - 1), a);
        if (dim == 2 && !(c->pt < c->ih && pb < c->ih))
            return tl_set_error(TL_ERR_RUNTIME, "Argument #6: Padding size should be less than the corresponding input "
                                                "dimension, but got: padding (%lld, %lld) at dimension %lld of input %s",
                                (long long)c->pt, (long long)pb, (long long)(nd - 2), a);
    }
    c->ow = c->iw + c->pl + pr;
    c->oh = c->ih + c->pt + pb;
    if (c->ow < 1 || c->oh < 1) {
        if (dim == 1)
            return tl_set_error(TL_ERR_RUNTIME, "input (W: %lld) is too small. Calculated output W: %lld",
                                (long long)c->iw, (long long)c->ow);
        return tl_set_error(TL_ERR_RUNTIME, "input (H: %lld, W: %lld) is too small. Calculated output H: %lld W: %lld",
                            (long long)c->ih, (long long)c->iw, (long long)c->oh, (long long)c->ow);
    }
    if (mode == REPLICATE) return 0;
    /* reflection's padded positions must land inside the input (negative pads narrow) */
    if (-c->pl >= c->iw || -pr >= c->iw || -c->pt >= c->ih || -pb >= c->ih)
        return tl_set_error(TL_ERR_RUNTIME, "input %s is too small for padding", a);
    return 0;
}

static int64_t pad_planes(const tl_tensor *t, int dim) {
    int64_t n = 1;
    for (int64_t i = 0; i < tl_tensor_ndim(t) - dim; i++) n *= tl_tensor_sizes(t)[i];
    return n;
}

static int64_t pad_grain(const pad_ctx *c) {
    const int64_t per = c->od * c->oh * c->ow;
    return per > 0 && 32768 / per > 0 ? 32768 / per : 1;
}

/* PyTorch's dispatch lists: every dtype but bool (ALL_TYPES_AND_COMPLEX + half / bfloat16) */
static int pad_dtype_check(const tl_tensor *self, const char *name) {
    if (tl_tensor_dtype(self) == TL_BOOL)
        return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for 'Bool'", name);
    return 0;
}

static tl_tensor *pad_forward(tl_tensor *self, const int64_t *padding, int64_t plen, int dim, int mode) {
    pad_ctx c;
    if (pad_geom(self, padding, plen, dim, mode, &c)) return NULL;
    if (dim == 3 && pad_dtype_check(self, mode == REFLECT ? "reflection_pad3d" : "replication_pad3d")) return NULL;
    const int64_t nd = tl_tensor_ndim(self);
    int64_t shape[MAXD];
    memcpy(shape, tl_tensor_sizes(self), (size_t)nd * sizeof(int64_t));
    shape[nd - 1] = c.ow;
    if (dim >= 2) shape[nd - 2] = c.oh;
    if (dim == 3) shape[nd - 3] = c.od;
    tl_tensor *x = tl_contiguous(self), *y = x ? tl_empty(nd, shape, tl_tensor_dtype(self), TL_CPU) : NULL;
    if (y && tl_tensor_numel(y)) {
        c.src = tl_tensor_data_ptr(x);
        c.dst = tl_tensor_data_ptr(y);
        c.isz = tl__itemsize(tl_tensor_dtype(self));
        c.mode = mode;
        tl_parallel_for(pad_planes(self, dim), pad_grain(&c), pad_fwd_planes, &c);
    }
    tl_tensor_release(x);
    return y;
}

/* grad_output's sizes against the padded input: PyTorch's per-dim messages
 * (replication spells them "gradOutput", and checks the channels of a 3-d pad) */
static int pad_check_grad(const tl_tensor *grad_output, const tl_tensor *self, int dim, int mode, const pad_ctx *c,
                          const char *name) {
    const int64_t nd = tl_tensor_ndim(self), gnd = tl_tensor_ndim(grad_output);
    const int64_t *gs = tl_tensor_sizes(grad_output);
    const char *g = dim == 3 && mode == REPLICATE ? "gradOutput" : "grad_output";
    if (dim == 3 && mode == REFLECT && gnd != nd)
        return tl_set_error(TL_ERR_RUNTIME, "Expected grad_output.dim() == input.dim() to be true, but got false.  "
                                            "(Could this error message be improved?  If so, please report an "
                                            "enhancement request to PyTorch.)");
    const char *what[3] = {"width", "height", "depth"};
    const int64_t want[3] = {c->ow, c->oh, c->od};
    for (int i = 0; i < dim; i++) {
        const int64_t got = gnd > i ? gs[gnd - 1 - i] : 0;
        if (got != want[i])
            return tl_set_error(TL_ERR_RUNTIME, "%s %s unexpected. Expected: %lld, Got: %lld", g, what[i],
                                (long long)want[i], (long long)got);
    }
    if (dim == 3 && mode == REPLICATE && gnd > 3 && nd > 3 && gs[gnd - 4] != tl_tensor_sizes(self)[nd - 4])
        return tl_set_error(TL_ERR_RUNTIME, "gradOutput channel unexpected. Expected: %lld, Got: %lld",
                            (long long)tl_tensor_sizes(self)[nd - 4], (long long)gs[gnd - 4]);
    /* the leading dims (no PyTorch message: its kernels index by the input's sizes) */
    if (gnd != nd || memcmp(gs, tl_tensor_sizes(self), (size_t)(nd - dim) * sizeof(int64_t)))
        return tl_set_error(TL_ERR_RUNTIME, "%s: grad_output must have the leading dimensions of the input", name);
    return 0;
}

static tl_tensor *pad_backward(tl_tensor *grad_output, tl_tensor *self, const int64_t *padding, int64_t plen, int dim,
                               int mode, const char *name) {
    pad_ctx c;
    if (pad_geom(self, padding, plen, dim, mode, &c)) return NULL;
    const int64_t nd = tl_tensor_ndim(self);
    const tl_dtype dt = tl_tensor_dtype(self);
    if (dim == 3 && pad_check_grad(grad_output, self, dim, mode, &c, name)) return NULL;
    if (!tl_dtype_is_floating(dt)) {
        tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", name, tl_dtype_scalar_name(dt));
        return NULL;
    }
    if (dim == 3 && tl_tensor_dtype(grad_output) != dt) {
        tl_set_error(TL_ERR_RUNTIME, "expected scalar type %s but found %s",
                     tl_dtype_scalar_name(tl_tensor_dtype(grad_output)), tl_dtype_scalar_name(dt));
        return NULL;
    }
    if (dim < 3 && pad_check_grad(grad_output, self, dim, mode, &c, name)) return NULL;
    const tl_dtype ct = compute_dtype(dt);
    tl_tensor *g = contig_as(grad_output, ct), *gi = g ? tl_zeros(nd, tl_tensor_sizes(self), ct, TL_CPU) : NULL, *r = NULL;
    if (gi) {
        c.src = tl_tensor_data_ptr(g);
        c.dst = tl_tensor_data_ptr(gi);
        c.isz = tl__itemsize(ct);
        c.mode = mode;
        c.ct = ct;
        if (tl_tensor_numel(g)) tl_parallel_for(pad_planes(self, dim), pad_grain(&c), pad_bwd_planes, &c);
        r = ct == dt ? (tl_tensor_retain(gi), gi) : tl_to_dtype(gi, dt, 0);
    }
    tl_tensor_release(g);
    tl_tensor_release(gi);
    return r;
}

tl_tensor *tl_native_reflection_pad1d_cpu(tl_keyset ks, tl_tensor *self, const int64_t *padding, int64_t padding_len) {
    (void)ks;
    return pad_forward(self, padding, padding_len, 1, REFLECT);
}

tl_tensor *tl_native_reflection_pad2d_cpu(tl_keyset ks, tl_tensor *self, const int64_t *padding, int64_t padding_len) {
    (void)ks;
    return pad_forward(self, padding, padding_len, 2, REFLECT);
}

tl_tensor *tl_native_replication_pad1d_cpu(tl_keyset ks, tl_tensor *self, const int64_t *padding,
                                           int64_t padding_len) {
    (void)ks;
    return pad_forward(self, padding, padding_len, 1, REPLICATE);
}

tl_tensor *tl_native_replication_pad2d_cpu(tl_keyset ks, tl_tensor *self, const int64_t *padding,
                                           int64_t padding_len) {
    (void)ks;
    return pad_forward(self, padding, padding_len, 2, REPLICATE);
}

tl_tensor *tl_native_reflection_pad1d_backward_cpu(tl_keyset ks, tl_tensor *grad_output, tl_tensor *self,
                                                   const int64_t *padding, int64_t padding_len) {
    (void)ks;
    return pad_backward(grad_output, self, padding, padding_len, 1, REFLECT, "reflection_pad1d_backward_cpu");
}

tl_tensor *tl_native_reflection_pad2d_backward_cpu(tl_keyset ks, tl_tensor *grad_output, tl_tensor *self,
                                                   const int64_t *padding, int64_t padding_len) {
    (void)ks;
    return pad_backward(grad_output, self, padding, padding_len, 2, REFLECT, "reflection_pad2d_backward_cpu");
}

tl_tensor *tl_native_replication_pad1d_backward_cpu(tl_keyset ks, tl_tensor *grad_output, tl_tensor *self,
                                                    const int64_t *padding, int64_t padding_len) {
    (void)ks;
    return pad_backward(grad_output, self, padding, padding_len, 1, REPLICATE, "replication_pad1d_backward_cpu");
}

tl_tensor *tl_native_replication_pad2d_backward_cpu(tl_keyset ks, tl_tensor *grad_output, tl_tensor *self,
                                                    const int64_t *padding, int64_t padding_len) {
    (void)ks;
    return pad_backward(grad_output, self, padding, padding_len, 2, REPLICATE, "replication_pad2d_backward_cpu");
}

tl_tensor *tl_native_reflection_pad3d_cpu(tl_keyset ks, tl_tensor *self, const int64_t *padding, int64_t padding_len) {
    (void)ks;
    return pad_forward(self, padding, padding_len, 3, REFLECT);
}

tl_tensor *tl_native_replication_pad3d_cpu(tl_keyset ks, tl_tensor *self, const int64_t *padding,
                                           int64_t padding_len) {
    (void)ks;
    return pad_forward(self, padding, padding_len, 3, REPLICATE);
}

tl_tensor *tl_native_reflection_pad3d_backward_cpu(tl_keyset ks, tl_tensor *grad_output, tl_tensor *self,
                                                   const int64_t *padding, int64_t padding_len) {
    (void)ks;
    return pad_backward(grad_output, self, padding, padding_len, 3, REFLECT, "reflection_pad3d_backward");
}

tl_tensor *tl_native_replication_pad3d_backward_cpu(tl_keyset ks, tl_tensor *grad_output, tl_tensor *self,
                                                    const int64_t *padding, int64_t padding_len) {
    (void)ks;
    return pad_backward(grad_output, self, padding, padding_len, 3, REPLICATE, "replication_pad3d_backward");
}
