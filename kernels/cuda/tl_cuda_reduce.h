/* Host side of the CUDA reductions and softmax (kernels/cuda/tl_cuda_reduce.c; kernels
 * in generated/cuda/reduce.cu from kernels/cuda/tl_cuda_reduce.cuh). */
#ifndef TL_CUDA_REDUCE_H
#define TL_CUDA_REDUCE_H

#include <stdint.h>

#include "tl_cuda.h"
#include "tl_cuda_reduce_params.h"
#include "tl_dtype.h"

/* the operators, in the order of the generated table */
enum {
    TL_CUDA_REDUCE_SUM, TL_CUDA_REDUCE_MEAN, TL_CUDA_REDUCE_AMAX, TL_CUDA_REDUCE_AMIN,
    TL_CUDA_REDUCE_ARGMAX, TL_CUDA_REDUCE_ARGMIN, TL_CUDA_REDUCE_PROD, TL_CUDA_REDUCE_VAR, TL_CUDA_REDUCE_STD,
    TL_CUDA_REDUCE_LOGSUMEXP, TL_CUDA_REDUCE_ANY, TL_CUDA_REDUCE_ALL,
    /* linalg_vector_norm by order: 2, 1, inf, -inf, 0, any other p */
    TL_CUDA_REDUCE_NORM2, TL_CUDA_REDUCE_NORM1, TL_CUDA_REDUCE_NORM_INF, TL_CUDA_REDUCE_NORM_NEGINF,
    TL_CUDA_REDUCE_NORM0, TL_CUDA_REDUCE_NORM_P, TL_CUDA_REDUCE_NANSUM, TL_CUDA_REDUCE_NOPS
};

typedef struct tl_cuda_reduce_kernels {
    tl_cuda_function *rows, *combine;   /* NULL: dtype unsupported */
    tl_cuda_function *cols;             /* a thread per output (outer-dim reductions) */
    int acc_bytes;                      /* one partial accumulator */
} tl_cuda_reduce_kernels;

/* generated/cuda/reduce_cuda.c */
extern const tl_cuda_reduce_kernels tl_cuda_reduce_table[TL_CUDA_REDUCE_NOPS][TL_NUM_DTYPES];

/* launch geometry of a reduction of nout outputs over nred elements each
 * (pure; unit-tested): threads per block (32..512, a multiple of 32), the
 * chunks per output (splits, 1 = one pass) of `chunk` elements, the blocks of
 * pass 1 and the threads of pass 2 (the combine) */
typedef struct tl_cuda_reduce_plan {
    unsigned threads, grid;
    uint32_t splits, chunk;
    unsigned combine_threads, combine_grid;
} tl_cuda_reduce_plan;
void tl_cuda_reduce_make_plan(int64_t nout, int64_t nred, tl_cuda_reduce_plan *plan);

/* whether a reduction runs a thread per output (the _cols kernel): its
 * innermost kept dim lies closer in memory than its innermost reduced dim
 * (an outer-dim reduction, so neighbouring threads read neighbouring
 * elements) and there are enough outputs to fill the device
 * (TL_CUDA_REDUCE_COLS_MIN_OUT); pure, unit-tested */
#define TL_CUDA_REDUCE_COLS_MIN_OUT 1024
int tl_cuda_reduce_use_cols(const tl_cuda_reduce_params *p);

/* one pass of f, one block per row (a grid-stride loop past 65536 rows),
 * the plan's threads for p->nout rows of p->nred elements: the kernels that
 * read and write whole rows */
int tl_cuda_launch_rows(tl_cuda_function *f, tl_cuda_reduce_params *p);

/* makes x's device current with the device guard (tl_cuda_guard.h; CPU
 * tensors, the host-shim tests, change nothing; *prev: the device to
 * restore); leave restores it and passes rc */
int tl_cuda_enter_device(const tl_tensor *x, int *prev);
int tl_cuda_leave_device(int prev, int rc);

/* every tensor of ts (NULLs skipped) on the first one's device, else
 * PyTorch's "Expected all tensors to be on the same device" (tl_cuda_norm.c) */
int tl_cuda_same_device(tl_tensor *const *ts, int n);

/* out = op over the dims in `mask` of x (x's dtype: the result's for sum and
 * mean; out: int64 for argmax / argmin, else x's dtype; shapes as the meta
 * functions set them, keepdim or not). Both on one device (or both CPU
 * tensors: the host-shim tests). */
int tl_cuda_reduce_run(int op, const tl_tensor *x, uint64_t mask, tl_tensor *out);

/* the same over x converted to out's dtype first (convert) or as is, with
 * the operator's scalar (var's correction, the norm's p) and a second
 * output of out's shape (var_mean's mean, max.dim's values; NULL: none) */
int tl_cuda_reduce_into(int op, const tl_tensor *x, int convert, uint64_t mask, double scalar, tl_tensor *out,
                        tl_tensor *out2);

/* softmax (log 0) / log_softmax (log 1) of x over dim (wrapped; 0 for a 0-dim
 * x) into out of x's shape and dtype; float16 / bfloat16 / float32 / float64 */
extern tl_cuda_function *const tl_cuda_softmax_table[2][TL_NUM_DTYPES];
int tl_cuda_softmax_run(int log, const tl_tensor *x, int64_t dim, tl_tensor *out);

/* their backward: grad_input of the softmax (log 0) / log_softmax (log 1)
 * whose output was y, from grad (grad's and y's shape and dtype; out too) */
extern tl_cuda_function *const tl_cuda_softmax_bwd_table[2][TL_NUM_DTYPES];
int tl_cuda_softmax_backward_run(int log, const tl_tensor *grad, const tl_tensor *y, int64_t dim, tl_tensor *out);

/* cumsum / cumprod: [TL_CUDA_SCAN_<OP>][tl_dtype] (all but the complex dtypes) */
enum { TL_CUDA_SCAN_SUM, TL_CUDA_SCAN_PROD };
extern tl_cuda_function *const tl_cuda_scan_table[2][TL_NUM_DTYPES];

/* layer_norm's kernels: [TL_CUDA_LAYER_NORM_<KIND>][tl_dtype], floating dtypes */
enum { TL_CUDA_LAYER_NORM_FWD, TL_CUDA_LAYER_NORM_BWD, TL_CUDA_LAYER_NORM_BWD_WB };
extern tl_cuda_function *const tl_cuda_layer_norm_table[3][TL_NUM_DTYPES];

#endif
