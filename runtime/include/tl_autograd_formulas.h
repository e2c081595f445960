/* torchlet: helpers that derivative formulas call (yaml/derivatives.yaml),
 * written once (runtime/src/autograd_formulas.c).
 *
 * The generated backward nodes (generated/csrc/autograd_*.c) translate a
 * formula such as `mul_tensor_backward(grad, other, self.scalar_type())` into
 * `tl_ag_mul_tensor_backward(grad, other, self_scalar_type)`. Every helper is
 * built from torchlet's own operator entry points (tl_ops_*), so with
 * create_graph the gradients they compute are differentiable again.
 *
 * Conventions (docs/OPERATOR_ABI.md): tensors are borrowed; a returned tensor
 * is a new reference, or NULL with the thread-local error set. Lists are
 * (pointer, length); an optional list is NULL for None.
 *
 * cdef-clean (not in cdef_headers.txt today; the formulas are C-only).
 */
#ifndef TL_AUTOGRAD_FORMULAS_H
#define TL_AUTOGRAD_FORMULAS_H

#include <stdbool.h>
#include <stdint.h>
#include "tl_dtype.h"
#include "tl_tensor.h"

typedef struct tl_node tl_node;

/* A list of ints a backward node saves (sizes, dims): inline up to 6 entries,
 * heap beyond; `has` is 0 for a saved None. Zero-filled = empty. */
typedef struct tl_ag_int_list {
    int64_t *data;
    int64_t len;
    int has;
    int64_t inline_[6];
} tl_ag_int_list;
/* copy v[0..n) (v NULL: None); 0 / -1 */
int tl_ag_int_list_set(tl_ag_int_list *l, const int64_t *v, int64_t n);
void tl_ag_int_list_free(tl_ag_int_list *l);

/* Store a computed input gradient `g` (stolen) into *slot for next edge i of
 * node, first reduced to the shape (sum_to: undoes broadcasting) and cast to
 * the dtype recorded for that edge (PyTorch's validate_outputs). 0 / -1. */
int tl_ag_set_grad_input(tl_node *node, int32_t i, tl_tensor *g, tl_tensor **slot);

/* floating (and complex, when torchlet has it) dtypes can require gradients */
bool tl_ag_is_differentiable_type(tl_dtype dt);

/* the gradient of a real input from a (possibly complex) gradient: identity
 * for the real dtypes torchlet has */
tl_tensor *tl_ag_handle_r_to_c(tl_dtype self_st, tl_tensor *grad);
/* t * s, or t itself (new reference) when s is 1 */
tl_tensor *tl_ag_maybe_multiply(tl_tensor *t, tl_scalar s);
/* grad reduced to `sizes` (undoes broadcasting): leading dims summed away,
 * dims of size 1 in `sizes` summed with keepdim; grad itself when it already
 * has that shape */
tl_tensor *tl_ag_sum_to(tl_tensor *grad, const int64_t *sizes, int64_t ndim);

tl_tensor *tl_ag_mul_tensor_backward(tl_tensor *grad, tl_tensor *other, tl_dtype self_st);
tl_tensor *tl_ag_mul_tensor_backward_scalar(tl_tensor *grad, tl_scalar other, tl_dtype self_st);
tl_tensor *tl_ag_div_tensor_self_backward(tl_tensor *grad, tl_tensor *other, tl_dtype self_st);
tl_tensor *tl_ag_div_tensor_self_backward_scalar(tl_tensor *grad, tl_scalar other, tl_dtype self_st);
tl_tensor *tl_ag_div_tensor_other_backward(tl_tensor *grad, tl_tensor *self, tl_tensor *other);
/* div with rounding_mode (NULL: true division): a rounded quotient is piecewise
 * constant, so its gradient is zero (PyTorch's) */
tl_tensor *tl_ag_div_tensor_self_backward_mode(tl_tensor *grad, tl_tensor *other, tl_dtype self_st, const char *mode);
tl_tensor *tl_ag_div_tensor_self_backward_scalar_mode(tl_tensor *grad, tl_scalar other, tl_dtype self_st,
                                                      const char *mode);
tl_tensor *tl_ag_div_tensor_other_backward_mode(tl_tensor *grad, tl_tensor *self, tl_tensor *other, const char *mode);

/* sum.dim_IntList: unsqueeze the reduced dims (keepdim=False), expand to sizes;
 * dims NULL or empty: every dim */
tl_tensor *tl_ag_sum_backward(tl_tensor *grad, const int64_t *sizes, int64_t ndim,
                              const int64_t *dims, int64_t ndims, bool keepdim);
/* mm: grad @ mat2^T (alpha-scaled) and mat1^T @ grad */
tl_tensor *tl_ag_mm_mat1_backward(tl_tensor *grad, tl_tensor *mat2, const int64_t *sizes, int64_t nsizes,
                                  const int64_t *strides, int64_t nstrides, int layout, tl_scalar alpha);
tl_tensor *tl_ag_mm_mat2_backward(tl_tensor *grad, tl_tensor *mat1, const int64_t *sizes, int64_t nsizes,
                                  const int64_t *strides, int64_t nstrides, int layout, tl_scalar alpha);
/* permute: the inverse permutation */
tl_tensor *tl_ag_permute_backwards(tl_tensor *grad, const int64_t *dims, int64_t ndims);
/* squeeze / squeeze.dim / squeeze.dims: put the removed size-1 dims back */
tl_tensor *tl_ag_unsqueeze_to(tl_tensor *grad, const int64_t *sizes, int64_t ndim);
tl_tensor *tl_ag_unsqueeze_to_dim(tl_tensor *grad, int64_t dim, const int64_t *sizes, int64_t ndim);
tl_tensor *tl_ag_unsqueeze_to_dims(tl_tensor *grad, const int64_t *dims, int64_t ndims,
                                   const int64_t *sizes, int64_t ndim);
/* slice.Tensor's optional bounds -> slice_backward */
tl_tensor *tl_ag_slice_backward_wrapper(tl_tensor *grad, const int64_t *sizes, int64_t ndim, int64_t dim,
                                        int64_t start, bool start_has, int64_t end, bool end_has,
                                        int64_t step);
/* _to_copy: the gradient back in the input's dtype and device */
tl_tensor *tl_ag_to_copy_backward(tl_tensor *grad, tl_dtype dtype, int device);
/* as_strided: the gradient scattered (summed) into the storage positions the
 * output covered, gathered back with the input's geometry (divided by the
 * number of input elements sharing a position when the input overlaps).
 * Computed directly in C: not differentiable again (an error under
 * create_graph when grad requires grad). */
tl_tensor *tl_ag_as_strided_backward(tl_tensor *grad, const int64_t *in_sizes, int64_t in_nd,
                                     const int64_t *in_strides, int64_t in_ns, int64_t in_offset,
                                     const int64_t *sizes, int64_t nd, const int64_t *strides, int64_t ns,
                                     int64_t offset, bool offset_has);
/* zeros_like(x) from the saved TypeAndSize of x (x_info.zeros()) */
tl_tensor *tl_ag_zeros_info(const int64_t *sizes, int64_t ndim, tl_dtype dtype, int device);

/* kernels of the backward operators declared in yaml/native_functions.yaml */
tl_tensor *tl_ag_threshold_backward_cpu(tl_tensor *grad_output, tl_tensor *self, tl_scalar threshold);

#endif
