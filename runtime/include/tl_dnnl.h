/* oneDNN, the optional accelerator of the CPU convolutions
 * (kernels/native/dnnl_api.c; docs/NN.md "Convolution"). libdnnl.so.3 is
 * loaded at first use, never linked: without it (or with TORCHLET_ONEDNN=0)
 * the convolutions run their im2col + GEMM path. torchlet.backends.mkldnn
 * is the Python face of these calls. */
#ifndef TL_DNNL_H
#define TL_DNNL_H

/* where to load the library from (torchlet sets the installed wheel's copy
 * at import); TORCHLET_LIBDNNL overrides it; neither: "libdnnl.so.3" from the
 * loader's search path. Only before the first load counts. */
void tl_dnnl_set_library(const char *path);

/* 1 when the library loaded and its entry points resolved (loads it) */
int tl_dnnl_is_available(void);

/* why tl_dnnl_is_available() is 0 ("" when it is 1) */
const char *tl_dnnl_unavailable_reason(void);

/* whether the convolutions may use it (torch.backends.mkldnn.enabled): on
 * unless TORCHLET_ONEDNN=0 at the first call */
int tl_dnnl_enabled(void);
void tl_dnnl_set_enabled(int enabled);

/* the primitives created so far and held in the convolution cache */
int tl_dnnl_cache_size(void);

#endif
