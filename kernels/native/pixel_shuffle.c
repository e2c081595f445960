/* pixel_shuffle, pixel_unshuffle and channel_shuffle (CPU kernels): each
 * is one permutation of a reshaped input, so the output is allocated in its
 * final shape and filled by tl_copy_ from the permuted view of the input
 * into a view of the output (the runtime's strided copy). Checks and
 * messages as PyTorch 2.13's (aten/src/ATen/native/PixelShuffle.cpp,
 * ChanelShuffle.cpp). */
#include <string.h>

#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/channel_shuffle.h"
#include "ops/pixel_shuffle.h"
#include "ops/pixel_unshuffle.h"
#include "tl_tensor.h"

/* out (shape osz, nd dims) = permute(view(self, k dims vsz), perm) viewed
 * in the out shape; vsz / perm have k entries, the first the flattened batch */
static tl_tensor *permuted_copy(tl_tensor *self, int64_t nd, const int64_t *osz, int k, const int64_t *vsz,
                                const int64_t *perm) {
    tl_tensor *c = tl_contiguous(self);
    tl_tensor *v = c ? tl_view(c, k, vsz) : NULL;
    tl_tensor *p = v ? tl_permute(v, k, perm) : NULL;
    tl_tensor *out = p ? tl_empty(nd, osz, tl_tensor_dtype(self), TL_CPU) : NULL;
    int64_t psz[8];
    for (int i = 0; i < k; i++) psz[i] = vsz[perm[i]];
    tl_tensor *ov = out ? tl_view(out, k, psz) : NULL;
    int rc = ov ? tl_copy_(ov, p) : -1;
    tl_tensor_release(ov);
    tl_tensor_release(p);
    tl_tensor_release(v);
    tl_tensor_release(c);
    if (rc) {
        tl_tensor_release(out);
        return NULL;
    }
    return out;
}

static int64_t batch_of(const tl_tensor *t, int64_t upto) {
    int64_t b = 1;
    for (int64_t i = 0; i < upto; i++) b *= tl_tensor_sizes(t)[i];
    return b;
}

tl_tensor *tl_native_pixel_shuffle_cpu(tl_keyset ks, tl_tensor *self, int64_t upscale_factor) {
    (void)ks;
    const int64_t nd = tl_tensor_ndim(self);
    if (nd < 3)
        return tl_set_error(TL_ERR_RUNTIME, "pixel_shuffle expects input to have at least 3 dimensions, but got input "
                                            "with %lld dimension(s)", (long long)nd), NULL;
    const int64_t r = upscale_factor;
    if (r <= 0)
        return tl_set_error(TL_ERR_RUNTIME, "pixel_shuffle expects a positive upscale_factor, but got %lld",
                            (long long)r), NULL;
    const int64_t *s = tl_tensor_sizes(self), c = s[nd - 3], h = s[nd - 2], w = s[nd - 1];
    if (c % (r * r) != 0)
        return tl_set_error(TL_ERR_RUNTIME, "pixel_shuffle expects its input's 'channel' dimension to be divisible by "
                                            "the square of upscale_factor, but input.size(-3)=%lld is not divisible "
                                            "by %lld", (long long)c, (long long)(r * r)), NULL;
    int64_t osz[TL_MAX_DIMS];
    memcpy(osz, s, (size_t)nd * sizeof(int64_t));
    osz[nd - 3] = c / (r * r);
    osz[nd - 2] = h * r;
    osz[nd - 1] = w * r;
    const int64_t vsz[6] = {batch_of(self, nd - 3), c / (r * r), r, r, h, w}, perm[6] = {0, 1, 4, 2, 5, 3};
    return permuted_copy(self, nd, osz, 6, vsz, perm);
}

tl_tensor *tl_native_pixel_unshuffle_cpu(tl_keyset ks, tl_tensor *self, int64_t downscale_factor) {
    (void)ks;
    const int64_t nd = tl_tensor_ndim(self);
    if (nd < 3)
        return tl_set_error(TL_ERR_RUNTIME, "pixel_unshuffle expects input to have at least 3 dimensions, but got "
                                            "input with %lld dimension(s)", (long long)nd), NULL;
    const int64_t r = downscale_factor;
    if (r <= 0)
        return tl_set_error(TL_ERR_RUNTIME, "pixel_unshuffle expects a positive downscale_factor, but got %lld",
                            (long long)r), NULL;
    const int64_t *s = tl_tensor_sizes(self), c = s[nd - 3], h = s[nd - 2], w = s[nd - 1];
    if (h % r != 0)
        return tl_set_error(TL_ERR_RUNTIME, "pixel_unshuffle expects height to be divisible by downscale_factor, but "
                                            "input.size(-2)=%lld is not divisible by %lld", (long long)h,
                            (long long)r), NULL;
    if (w % r != 0)
        return tl_set_error(TL_ERR_RUNTIME, "pixel_unshuffle expects width to be divisible by downscale_factor, but "
                                            "input.size(-1)=%lld is not divisible by %lld", (long long)w,
                            (long long)r), NULL;
    int64_t osz[TL_MAX_DIMS];
    memcpy(osz, s, (size_t)nd * sizeof(int64_t));
    osz[nd - 3] = c * r * r;
    osz[nd - 2] = h / r;
    osz[nd - 1] = w / r;
    const int64_t vsz[6] = {batch_of(self, nd - 3), c, h / r, r, w / r, r}, perm[6] = {0, 1, 3, 5, 2, 4};
    return permuted_copy(self, nd, osz, 6, vsz, perm);
}

/* channel_shuffle: (N, g, C/g, *) -> (N, C/g, g, *) */
tl_tensor *tl_native_channel_shuffle(tl_keyset ks, tl_tensor *self, int64_t groups) {
    (void)ks;
    const int64_t nd = tl_tensor_ndim(self);
    if (nd <= 2)
        return tl_set_error(TL_ERR_RUNTIME, "channel_shuffle expects input to have at least 3 dimensions, but got "
                                            "input with %lld dimension(s)", (long long)nd), NULL;
    if (groups <= 0)
        return tl_set_error(TL_ERR_RUNTIME, "Number of groups to divide channels in must be positive. Value of "
                                            "groups:%lld", (long long)groups), NULL;
    const int64_t *s = tl_tensor_sizes(self), c = s[1];
    if (c % groups != 0)
        return tl_set_error(TL_ERR_RUNTIME, "Number of channels must be divisible by groups. Got %lld channels and "
                                            "%lld groups.", (long long)c, (long long)groups), NULL;
    const int64_t vsz[4] = {s[0], groups, c / groups, batch_of(self, nd) / (s[0] * c > 0 ? s[0] * c : 1)};
    const int64_t perm[4] = {0, 2, 1, 3};
    if (s[0] * c == 0) return tl_empty(nd, s, tl_tensor_dtype(self), TL_CPU);
    return permuted_copy(self, nd, s, 4, vsz, perm);
}
