/* torchlet CUDA backend: host side of the generated pointwise kernels
 * (generated/cuda/ufunc_<op>_cuda.c launch through here; docs/CUDA.md).
 *
 * Layers, each usable without a GPU:
 *  - pure functions (unit-tested from Python through tl_cuda_test_*): the
 *    32-bit indexing rule and split, launch geometry, magic-number division;
 *  - tl_cuda_ufunc_launch_view: one operator over a plain view of the
 *    iteration space (data pointers, sizes, byte strides, dtypes): picks the
 *    variant, splits for 32-bit offsets, packs tl_cuda_ufunc_params, calls
 *    tl_cuda_launch (tl_cuda.h) per piece;
 *  - tl_cuda_ufunc_run: the same over a built TensorIterator.
 */
#ifndef TL_CUDA_LOOPS_H
#define TL_CUDA_LOOPS_H

#include <stdint.h>

#include "tl_cuda.h"
#include "tl_cuda_ufunc_params.h"
#include "tl_dtype.h"
#include "tl_iter.h"
#include "tl_structured.h"

enum { TL_CUDA_THREADS = 128, TL_CUDA_STRIDED_VT = 4 };

/* the kernels of one dtype of one operator (NULL vec: dtype unsupported) */
typedef struct tl_cuda_ufunc_kernels {
    tl_cuda_function *vec, *strided, *cast;
    int vec_size;                  /* elements per vector access in _vec */
    int elems_per_thread;          /* elements per thread in _vec */
    tl_dtype dtypes[TL_CUDA_MAX_OPS];  /* what each operand is read / written as (output first) */
} tl_cuda_ufunc_kernels;

typedef struct tl_cuda_ufunc_op {
    const char *not_implemented;   /* printf format of the unsupported-dtype error, %s = dtype */
    tl_cuda_program *program;
    int nin, nargs;
    const tl_cuda_ufunc_kernels *table;  /* TL_NUM_DTYPES entries */
} tl_cuda_ufunc_op;

/* the iteration space of one launch: dims innermost first (TensorIterator's
 * order), byte strides; cpu_scalar[i]: input i is a one-element host tensor
 * whose value goes into the parameter struct */
typedef struct tl_cuda_view {
    int nops, ndim;
    int64_t shape[TL_CUDA_MAX_DIMS];
    int64_t strides[TL_CUDA_MAX_OPS][TL_CUDA_MAX_DIMS];
    char *data[TL_CUDA_MAX_OPS];
    tl_dtype dtype[TL_CUDA_MAX_OPS];
    int cpu_scalar[TL_CUDA_MAX_OPS];
} tl_cuda_view;

/* kernel variants */
enum { TL_CUDA_VARIANT_VEC = 0, TL_CUDA_VARIANT_STRIDED = 1, TL_CUDA_VARIANT_CAST = 2 };

/* ---- pure functions */
int64_t tl_cuda_view_numel(const tl_cuda_view *v);
/* PyTorch's can_use_32bit_indexing with `limit` for INT32_MAX: numel and every
 * operand's largest byte offset fit */
int tl_cuda_can_use_32bit(const tl_cuda_view *v, int64_t limit);
/* calls fn on pieces of v that each pass tl_cuda_can_use_32bit, halving the
 * dimension with the largest byte extent (PyTorch's with_32bit_indexing);
 * -1 when fn fails or a single element cannot be addressed */
typedef int (*tl_cuda_piece_fn)(const tl_cuda_view *piece, void *ctx);
int tl_cuda_split_32bit(const tl_cuda_view *v, int64_t limit, tl_cuda_piece_fn fn, void *ctx);
/* merges adjacent dims that are contiguous in every operand; drops size-1 dims */
void tl_cuda_view_coalesce(tl_cuda_view *v);
/* PyTorch's IntDivider for d in [1, INT32_MAX]: n / d = (umulhi(n, magic) + n) >> shift for n < 2^31 */
void tl_cuda_int_divider(uint32_t d, uint32_t *magic, uint32_t *shift);
/* blocks of TL_CUDA_THREADS for n elements: per thread elems_per_thread in
 * the vectorized kernel, TL_CUDA_STRIDED_VT in the others */
uint32_t tl_cuda_grid_size(int variant, int64_t n, int elems_per_thread);
/* which kernel a piece takes: cast when an operand's dtype differs from the
 * kernels', vec when contiguous and every pointer aligned to a vector */
int tl_cuda_pick_variant(const tl_cuda_view *v, const tl_cuda_ufunc_kernels *k);

/* ---- launching */
/* the largest offset/element count a launch may use (INT32_MAX; tests lower it) */
void tl_cuda_set_index_limit(int64_t limit);
int64_t tl_cuda_index_limit(void);
/* runs op's kernels of dtype `common` (the iterator's common dtype) over v;
 * args: op->nargs scalar arguments */
int tl_cuda_ufunc_launch_view(const tl_cuda_ufunc_op *op, tl_dtype common, const tl_cuda_view *v,
                              const tl_scalar *args);
int tl_cuda_ufunc_run(const tl_cuda_ufunc_op *op, tl_iter *it, const tl_scalar *args);
/* runtime/src/iter.c: operand i as a launch sees it (byte strides of the
 * tl_iter_loop_ndim loop dims; cpu_scalar: a 0-dim CPU input) */
int tl_iter_operand_loop(const tl_iter *it, int i, char **data, int64_t *strides, tl_dtype *dtype,
                         int *cpu_scalar);
/* runtime/src/iter.c: copies results computed in common-dtype temporaries
 * into the out= tensors (what tl_iter_for_each does after its loops) */
int tl_iter_copy_back(tl_iter *it);

#endif
