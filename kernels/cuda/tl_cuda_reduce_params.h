/* The reduction kernels' one parameter struct (kernels/cuda/tl_cuda_reduce.cuh
 * on the device, kernels/cuda/tl_cuda_reduce.c on the host). Plain C with
 * fixed-width fields only: the program (generated/cuda/reduce.cu) includes
 * this text after the prelude (NVRTC gets it pasted in), so both sides read the same
 * declaration; each side checks the size.
 *
 * A launch reduces `nred` elements into each of `nout` outputs. Output m's
 * input elements start at the offset of m over the kept dims (out_*), element
 * k (0 <= k < nred, row-major over the reduced dims, so argmax's index) lies
 * at that start plus the offset of k over the reduced dims (red_*). Dims are
 * innermost first with PyTorch's magic-number divisors; offsets are bytes and
 * fit 32 bits. splits > 1: pass 1 writes `splits` partial accumulators per
 * output into `partial`, pass 2 (the _combine kernel) reduces them; a
 * reduction split into pieces along its reduced dims runs pass 1 per piece
 * into one partial buffer (partial_stride, k_base) and pass 2 once.
 * softmax / log_softmax reduce one dim and write every element of it; their
 * backward reads the gradient (in) and the forward's output (in2) with the
 * same strides. layer_norm's kernels read contiguous rows of nred elements
 * (x: in; its backward's gradient: in2) and the per-row mean / rstd. */
#ifndef TL_CUDA_REDUCE_PARAMS_H
#define TL_CUDA_REDUCE_PARAMS_H

#define TL_CUDA_REDUCE_MAX_DIMS 12
#define TL_CUDA_REDUCE_MAX_THREADS 512

typedef struct tl_cuda_reduce_params {
    uint64_t in, out, partial;   /* device pointers */
    uint64_t in2;                /* softmax backward: the forward's output, laid out as `in` (the gradient) */
    uint64_t weight, bias;       /* layer_norm: affine parameters (0: none); backward: grad_weight / grad_bias */
    uint64_t mean, rstd;         /* layer_norm: per row, in the accumulator type */
    double eps;                  /* layer_norm */
    double factor;               /* mean: 1 / nred (as the accumulator type) */
    double scalar;               /* var / std: the correction; norms: the order p */
    uint64_t out2;               /* a second output with out's element strides: var_mean's / std_mean's
                                    mean, max.dim's / min.dim's values (0: none) */
    uint32_t nout, nred;
    uint32_t splits, chunk;      /* chunks per output and elements per chunk */
    uint32_t out_ndim, red_ndim;
    uint32_t out_sizes[TL_CUDA_REDUCE_MAX_DIMS];
    uint32_t out_magic[TL_CUDA_REDUCE_MAX_DIMS];
    uint32_t out_shift[TL_CUDA_REDUCE_MAX_DIMS];
    int32_t out_in_stride[TL_CUDA_REDUCE_MAX_DIMS];   /* bytes in the input */
    int32_t out_out_stride[TL_CUDA_REDUCE_MAX_DIMS];  /* bytes in the output */
    uint32_t red_sizes[TL_CUDA_REDUCE_MAX_DIMS];
    uint32_t red_magic[TL_CUDA_REDUCE_MAX_DIMS];
    uint32_t red_shift[TL_CUDA_REDUCE_MAX_DIMS];
    int32_t red_stride[TL_CUDA_REDUCE_MAX_DIMS];
    int32_t red_out_stride;      /* softmax: the reduced dim's byte stride in the output (one dim) */
    uint32_t partial_stride;     /* a piece of a reduction split along its reduced dims (0: none): pass 1
                                    always writes partial[row * partial_stride + part] */
    int64_t k_base;              /* that piece's first element's index in its row (argmax's index) */
} tl_cuda_reduce_params;

#define TL_CUDA_REDUCE_PARAMS_SIZE 568

#endif
