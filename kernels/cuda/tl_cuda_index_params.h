/* The indexing kernels' one parameter struct (kernels/cuda/tl_cuda_index.cuh
 * on the device, kernels/cuda/tl_cuda_index.c on the host). Plain C with
 * fixed-width fields only: the program (generated/cuda/index.cu) includes
 * this text after the prelude (NVRTC gets it pasted in), so both sides read the same
 * declaration; each side checks the size.
 *
 * A launch visits `n` positions of an iteration shape (ndim dims, innermost
 * first, PyTorch's magic-number divisors; the field names are the prelude's
 * tl_cuda_offsets'). Per position three byte offsets: [0] into `out`, [1]
 * into `src`, [2] into `index`. The indexed tensor (src for a gather, out for
 * a scatter) has its indexed dim's stride zeroed in `strides` and moves by
 * index value x `dim_stride` bytes. An index outside [0, dim_size) is skipped
 * and recorded in `flag` (int64[2]: a set mark, the first bad value seen),
 * which the host reads back after the launch; dim_size INT64_MAX (indices
 * checked on the host) never sets it, and flag is 0 then. */
#ifndef TL_CUDA_INDEX_PARAMS_H
#define TL_CUDA_INDEX_PARAMS_H

#define TL_CUDA_INDEX_MAX_DIMS 25

/* index element types (index_type) */
#define TL_CUDA_INDEX_I32 0
#define TL_CUDA_INDEX_I64 1
#define TL_CUDA_INDEX_U8 2   /* nll_loss's Byte targets */

/* mode bits */
#define TL_CUDA_INDEX_SKIP 1   /* positions whose index equals `skip` do nothing (padding_idx, ignore_index) */
#define TL_CUDA_INDEX_FREQ 2   /* embedding backward: scale by 1 / count[index] (aux: int32 counts) */
#define TL_CUDA_INDEX_MEAN 4   /* nll_loss backward: divide by total_weight (aux) */
#define TL_CUDA_INDEX_ROWG 8   /* nll_loss backward: one grad_output per row (else one for all) */
#define TL_CUDA_INDEX_WRAP 16  /* an index in [-dim_size, 0) counts from the end (index_fill_) */

typedef struct tl_cuda_index_params {
    uint64_t out, src, index;   /* device pointers */
    uint64_t weight;            /* nll_loss: class weights (contiguous, 0: none) */
    uint64_t aux;               /* counts / per-row weights / total_weight (see the kernels) */
    uint64_t flag;              /* int64[2], zeroed by the host */
    double alpha;               /* floating scale (index_add's alpha) */
    int64_t alpha_int;          /* the same for integer dtypes */
    int64_t dim_size;           /* valid indices: [0, dim_size) */
    int64_t skip;
    int64_t dim_stride;         /* bytes */
    uint32_t n, ndim;
    int32_t index_type, mode;
    uint32_t sizes[TL_CUDA_INDEX_MAX_DIMS];
    uint32_t div_magic[TL_CUDA_INDEX_MAX_DIMS];
    uint32_t div_shift[TL_CUDA_INDEX_MAX_DIMS];
    int32_t strides[TL_CUDA_INDEX_MAX_DIMS][3];   /* bytes: out, src, index */
} tl_cuda_index_params;

#define TL_CUDA_INDEX_PARAMS_SIZE 704

#endif
