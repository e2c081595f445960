/* tl_cuda_ufunc_run: a generated CUDA operator over a built TensorIterator
 * (the structured impl of the CUDA key calls it with s->iter). */
#include "tl_cuda_loops.h"

#include "tl_error.h"

int tl_cuda_ufunc_run(const tl_cuda_ufunc_op *op, tl_iter *it, const tl_scalar *args) {
    if (tl_iter_is_meta(it) || tl_iter_numel(it) == 0) return 0;
    tl_cuda_view v;
    v.nops = tl_iter_noutputs(it) + tl_iter_ninputs(it);
    v.ndim = (int)tl_iter_loop_ndim(it);
    if (v.nops > TL_CUDA_MAX_OPS || v.nops != op->nin + 1)
        return tl_set_error(TL_ERR_RUNTIME, "CUDA ufunc kernels: %d operands for %d inputs", v.nops, op->nin);
    if (v.ndim > TL_CUDA_MAX_DIMS)
        return tl_set_error(TL_ERR_RUNTIME, "CUDA kernels take at most %d dims (got %d)", TL_CUDA_MAX_DIMS, v.ndim);
    if (tl_iter_loop_shape(it, v.shape) < 0) return -1;
    for (int i = 0; i < v.nops; i++)
        if (tl_iter_operand_loop(it, i, &v.data[i], v.strides[i], &v.dtype[i], &v.cpu_scalar[i]) < 0) return -1;
    if (tl_cuda_ufunc_launch_view(op, tl_iter_common_dtype(it), &v, args) < 0) return -1;
    return tl_iter_copy_back(it);
}
