/* Host side of the CUDA indexing kernels (kernels/cuda/tl_cuda_index.c;
 * kernels in generated/cuda/index.cu from kernels/cuda/tl_cuda_index.cuh). */
#ifndef TL_CUDA_INDEX_H
#define TL_CUDA_INDEX_H

#include <stdint.h>

#include "tl_cuda.h"
#include "tl_cuda_index_params.h"
#include "tl_dtype.h"

/* generated/cuda/index_cuda.c: NULL where no kernel exists */
extern tl_cuda_function *const tl_cuda_index_gather_table[5];   /* by element size: 1, 2, 4, 8, 16 bytes */
extern tl_cuda_function *const tl_cuda_index_scatter_table[5];  /* by element size */
extern tl_cuda_function *const tl_cuda_index_scatter_add_table[TL_NUM_DTYPES];
extern tl_cuda_function *const tl_cuda_index_count_table[1];
extern tl_cuda_function *const tl_cuda_index_embedding_backward_table[TL_NUM_DTYPES];
extern tl_cuda_function *const tl_cuda_index_nll_loss_forward_table[TL_NUM_DTYPES];
extern tl_cuda_function *const tl_cuda_index_nll_loss_backward_table[TL_NUM_DTYPES];

#endif
