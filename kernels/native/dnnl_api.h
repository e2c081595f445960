/* The slice of oneDNN's C API (v3, dnnl.h) the convolutions call, declared
 * here so that building needs no oneDNN headers: opaque handles, the enum
 * values used (stable across the v3 ABI: checked against 3.2 and 3.13), and
 * a table of entry points resolved by dlsym (kernels/native/dnnl_api.c). */
#ifndef TL_DNNL_API_H
#define TL_DNNL_API_H

#include <stddef.h>
#include <stdint.h>

typedef int dnnl_status_t; /* dnnl_success = 0 */
typedef int64_t dnnl_dim_t;
#define TL_DNNL_MAX_NDIMS 12
typedef dnnl_dim_t dnnl_dims_t[TL_DNNL_MAX_NDIMS];

typedef struct dnnl_engine *dnnl_engine_t;
typedef struct dnnl_stream *dnnl_stream_t;
typedef struct dnnl_memory_desc *dnnl_memory_desc_t;
typedef const struct dnnl_memory_desc *const_dnnl_memory_desc_t;
typedef struct dnnl_memory *dnnl_memory_t;
typedef struct dnnl_primitive_desc *dnnl_primitive_desc_t;
typedef struct dnnl_primitive *dnnl_primitive_t;
typedef struct dnnl_primitive_attr *dnnl_primitive_attr_t;

typedef struct {
    int arg;
    dnnl_memory_t memory;
} dnnl_exec_arg_t;

enum {
    TL_DNNL_SUCCESS = 0,
    TL_DNNL_F32 = 3,                   /* dnnl_f32 */
    TL_DNNL_TAG_ANY = 1,               /* dnnl_format_tag_any */
    TL_DNNL_CPU = 1,                   /* dnnl_cpu */
    TL_DNNL_STREAM_DEFAULT = 1,        /* dnnl_stream_default_flags */
    TL_DNNL_SCRATCHPAD_USER = 1,       /* dnnl_scratchpad_mode_user */
    TL_DNNL_FORWARD_TRAINING = 64,     /* dnnl_forward_training */
    TL_DNNL_CONVOLUTION_DIRECT = 1,    /* dnnl_convolution_direct */
    TL_DNNL_QUERY_IMPL_INFO_STR = 8,   /* dnnl_query_impl_info_str */
    TL_DNNL_QUERY_SRC_MD = 129,
    TL_DNNL_QUERY_DIFF_SRC_MD = 130,
    TL_DNNL_QUERY_WEIGHTS_MD = 131,
    TL_DNNL_QUERY_DIFF_WEIGHTS_MD = 132,
    TL_DNNL_QUERY_DST_MD = 133,
    TL_DNNL_QUERY_DIFF_DST_MD = 134,
    TL_DNNL_QUERY_SCRATCHPAD_MD = 136,
    TL_DNNL_ARG_SRC = 1,
    TL_DNNL_ARG_DST = 17,
    TL_DNNL_ARG_WEIGHTS = 33,
    TL_DNNL_ARG_BIAS = 41,
    TL_DNNL_ARG_SCRATCHPAD = 80,
    TL_DNNL_ARG_DIFF_SRC = 129,
    TL_DNNL_ARG_DIFF_DST = 145,
    TL_DNNL_ARG_DIFF_WEIGHTS = 161,
};

/* the plain row-major tag of an n-d tensor: dnnl_a = 2, dnnl_ab = 3, ... */
static inline int tl_dnnl_plain_tag(int ndims) { return ndims + 1; }

typedef struct {
    dnnl_status_t (*engine_create)(dnnl_engine_t *, int kind, size_t index);
    dnnl_status_t (*stream_create)(dnnl_stream_t *, dnnl_engine_t, unsigned flags);
    dnnl_status_t (*stream_wait)(dnnl_stream_t);
    dnnl_status_t (*memory_desc_create_with_tag)(dnnl_memory_desc_t *, int ndims, const dnnl_dims_t dims,
                                                 int data_type, int tag);
    dnnl_status_t (*memory_desc_destroy)(dnnl_memory_desc_t);
    int (*memory_desc_equal)(const_dnnl_memory_desc_t, const_dnnl_memory_desc_t);
    size_t (*memory_desc_get_size)(const_dnnl_memory_desc_t);
    dnnl_status_t (*memory_create)(dnnl_memory_t *, const_dnnl_memory_desc_t, dnnl_engine_t, void *handle);
    dnnl_status_t (*memory_destroy)(dnnl_memory_t);
    dnnl_status_t (*primitive_attr_create)(dnnl_primitive_attr_t *);
    dnnl_status_t (*primitive_attr_destroy)(dnnl_primitive_attr_t);
    dnnl_status_t (*primitive_attr_set_scratchpad_mode)(dnnl_primitive_attr_t, int mode);
    dnnl_status_t (*convolution_forward_primitive_desc_create)(
        dnnl_primitive_desc_t *, dnnl_engine_t, int prop_kind, int alg_kind, const_dnnl_memory_desc_t src,
        const_dnnl_memory_desc_t weights, const_dnnl_memory_desc_t bias, const_dnnl_memory_desc_t dst,
        const dnnl_dims_t strides, const dnnl_dims_t dilates, const dnnl_dims_t padding_l,
        const dnnl_dims_t padding_r, const dnnl_primitive_attr_t attr);
    dnnl_status_t (*convolution_backward_data_primitive_desc_create)(
        dnnl_primitive_desc_t *, dnnl_engine_t, int alg_kind, const_dnnl_memory_desc_t diff_src,
        const_dnnl_memory_desc_t weights, const_dnnl_memory_desc_t diff_dst, const dnnl_dims_t strides,
        const dnnl_dims_t dilates, const dnnl_dims_t padding_l, const dnnl_dims_t padding_r,
        const dnnl_primitive_desc_t hint_fwd_pd, const dnnl_primitive_attr_t attr);
    dnnl_status_t (*convolution_backward_weights_primitive_desc_create)(
        dnnl_primitive_desc_t *, dnnl_engine_t, int alg_kind, const_dnnl_memory_desc_t src,
        const_dnnl_memory_desc_t diff_weights, const_dnnl_memory_desc_t diff_bias,
        const_dnnl_memory_desc_t diff_dst, const dnnl_dims_t strides, const dnnl_dims_t dilates,
        const dnnl_dims_t padding_l, const dnnl_dims_t padding_r, const dnnl_primitive_desc_t hint_fwd_pd,
        const dnnl_primitive_attr_t attr);
    dnnl_status_t (*reorder_primitive_desc_create)(dnnl_primitive_desc_t *, const_dnnl_memory_desc_t src,
                                                   dnnl_engine_t, const_dnnl_memory_desc_t dst, dnnl_engine_t,
                                                   const dnnl_primitive_attr_t attr);
    const_dnnl_memory_desc_t (*primitive_desc_query_md)(const dnnl_primitive_desc_t, int what, int index);
    dnnl_status_t (*primitive_desc_query)(const dnnl_primitive_desc_t, int what, int index, void *result);
    dnnl_status_t (*primitive_desc_destroy)(dnnl_primitive_desc_t);
    dnnl_status_t (*primitive_create)(dnnl_primitive_t *, const dnnl_primitive_desc_t);
    dnnl_status_t (*primitive_destroy)(dnnl_primitive_t);
    dnnl_status_t (*primitive_execute)(const dnnl_primitive_t, dnnl_stream_t, int nargs, const dnnl_exec_arg_t *);
} tl_dnnl_api;

/* the table, the engine and this thread's stream, with oneDNN's thread
 * count set for a call from this thread; NULL when the library is missing
 * or disabled (nothing set: the caller takes its own path) */
const tl_dnnl_api *tl__dnnl(void);
dnnl_engine_t tl__dnnl_engine(void);
dnnl_stream_t tl__dnnl_stream(void);
int tl__dnnl_set_threads(void); /* the count set */

#endif
