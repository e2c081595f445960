/* torchlet: helpers that derivative formulas call (yaml/derivatives.yaml),
 * written once (autograd/autograd_formulas.c and the other files of autograd/).
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

/* A helper's temporaries, released together: keep() stores a new
 * reference (NULL passes through; a full arena releases it and sets an
 * error), release() drops them all. Zero-initialise: tl_ag_tmp a = {.n = 0}. */
typedef struct tl_ag_tmp {
    tl_tensor *t[32];
    int n;
} tl_ag_tmp;
tl_tensor *tl_ag_tmp_keep(tl_ag_tmp *a, tl_tensor *t);
void tl_ag_tmp_release(tl_ag_tmp *a);

/* The sizes of each tensor of a Tensor[] argument (to_args_sizes(tensors)),
 * one allocation; passed to helpers as (sizes, ndims, n). */
typedef struct tl_ag_sizes_list {
    int64_t **sizes;
    int64_t *ndims;
    int64_t n;
} tl_ag_sizes_list;
int tl_ag_sizes_list_set(tl_ag_sizes_list *l, tl_tensor *const *ts, int64_t n);
void tl_ag_sizes_list_free(tl_ag_sizes_list *l);
/* The dtype of each tensor of a Tensor[] argument (to_args_scalartypes(tensors)). */
typedef struct tl_ag_dtype_list {
    tl_dtype *data;
    int64_t n;
} tl_ag_dtype_list;
int tl_ag_dtype_list_set(tl_ag_dtype_list *l, tl_tensor *const *ts, int64_t n);
void tl_ag_dtype_list_free(tl_ag_dtype_list *l);
/* release each element (NULL ignored), then free the array (a Tensor[] result) */
void tl_ag_tensor_list_release(tl_tensor **list, int64_t n);
/* A saved Tensor?[] argument (index / index_put's `indices`): strong
 * references, None kept as NULL; passed to formulas as (data, n). Index
 * tensors never require grad, so holding them makes no cycle. */
typedef struct tl_ag_saved_tensors {
    tl_tensor **data;
    int64_t n;
} tl_ag_saved_tensors;
int tl_ag_saved_tensors_set(tl_ag_saved_tensors *l, tl_tensor *const *ts, int64_t n);
void tl_ag_saved_tensors_free(tl_ag_saved_tensors *l);
/* edges start..start+n-1 of a Tensor[] input: does any exist / is any wanted? */
bool tl_ag_any_edge(const tl_node *node, int32_t start, int32_t n);
bool tl_ag_any_should_compute(const tl_node *node, int32_t start, int32_t n);
double tl_ag_scalar_to_double(tl_scalar s);

/* Store a computed input gradient `g` (stolen) into *slot for next edge i of
 * node, first reduced to the shape (sum_to: undoes broadcasting) and cast to
 * the dtype recorded for that edge (PyTorch's validate_outputs). g NULL (an
 * undefined gradient) leaves the slot empty. 0 / -1. */
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
/* copysign's gradient for self: grad * (result / self), 0 where self == 0 (PyTorch's) */
tl_tensor *tl_ag_copysign_tensor_self_backward(tl_tensor *grad, tl_tensor *self, tl_tensor *result);
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

/* Tensor[] results (one gradient per element of a Tensor[] input): *ret is a
 * malloc'd array of *ret_len new references (tl_ag_tensor_list_release).
 * cat: grad narrowed back to each input's extent along dim (a 1-D empty input,
 * which cat skips, gets an empty gradient); stack: grad.select(dim, i). */
int tl_ag_cat_tensors_backward(tl_tensor *grad, const int64_t *const *sizes, const int64_t *ndims, int64_t n,
                               const tl_dtype *dtypes, int64_t ndtypes, int64_t dim, tl_tensor ***ret,
                               int64_t *ret_len);
int tl_ag_stack_tensors_backward(tl_tensor *grad, int64_t dim, const tl_dtype *dtypes, int64_t n, tl_tensor ***ret,
                                 int64_t *ret_len);

/* Tensor[] outputs (grads: one per output, NULL = zeros): the pieces put
 * back together (split / split_with_sizes: cat along dim; unbind: stack) */
tl_tensor *tl_ag_split_with_sizes_backward(tl_tensor *const *grads, int64_t n, const int64_t *split_sizes,
                                           int64_t nsplit, int64_t dim, const int64_t *sizes, int64_t ndim,
                                           tl_dtype dtype, int device);
tl_tensor *tl_ag_split_backward(tl_tensor *const *grads, int64_t n, int64_t split_size, int64_t dim,
                                const int64_t *sizes, int64_t ndim, tl_dtype dtype, int device);
tl_tensor *tl_ag_unbind_backward(tl_tensor *const *grads, int64_t n, int64_t dim);
/* index.Tensor's gradient: grad accumulated into zeros_like_self at the indexed
 * positions (index_put with accumulate=True, so it differentiates again) */
tl_tensor *tl_ag_index_backward(tl_tensor *zeros_like_self, tl_tensor *const *indices, int64_t n, tl_tensor *grad);

/* repeat's gradient: grad viewed as [r0, s0, r1, s1, ...] summed over the
 * repeat dims (FunctionsManual's repeat_backward); roll's: roll by the negated
 * shifts (PyTorch's formula reverses both lists, which commute) */
tl_tensor *tl_ag_repeat_backward(tl_tensor *grad, const int64_t *repeats, int64_t nrepeats, const int64_t *sizes,
                                 int64_t ndim);
tl_tensor *tl_ag_roll_backward(tl_tensor *grad, const int64_t *shifts, int64_t nshifts, const int64_t *dims,
                               int64_t ndims);

/* Reductions (FunctionsManual.cpp's). dims NULL: None (every dim);
 * correction NULL: None (1). The gradients of outputs that got none (gvar,
 * gmean ...) may be NULL. */
tl_tensor *tl_ag_value_selecting_reduction_backward(tl_tensor *grad, int64_t dim, tl_tensor *indices,
                                                    const int64_t *sizes, int64_t ndim, bool keepdim);
tl_tensor *tl_ag_mean_backward(tl_tensor *grad, const int64_t *sizes, int64_t ndim, const int64_t *dims,
                               int64_t ndims, int64_t numel, bool keepdim);
tl_tensor *tl_ag_var_backward(tl_tensor *grad, tl_tensor *self, const int64_t *dims, int64_t ndims,
                              const tl_scalar *correction, bool keepdim);
tl_tensor *tl_ag_std_backward(tl_tensor *result, tl_tensor *grad, tl_tensor *self, const int64_t *dims,
                              int64_t ndims, const tl_scalar *correction, bool keepdim);
tl_tensor *tl_ag_var_mean_backward(tl_tensor *gvar, tl_tensor *gmean, tl_tensor *self, const int64_t *dims,
                                   int64_t ndims, const tl_scalar *correction, bool keepdim);
tl_tensor *tl_ag_std_mean_backward(tl_tensor *gstd, tl_tensor *gmean, tl_tensor *self, tl_tensor *std,
                                   const int64_t *dims, int64_t ndims, const tl_scalar *correction, bool keepdim);

/* native_layer_norm's backward (grad_input_mask = output_mask[3]): the NN
 * operators' fused kernel (tl_nn.h), or under create_graph the same from operators so
 * that it differentiates again. Masked-off / absent outputs are NULL. */
int tl_ag_native_layer_norm_backward(tl_tensor *grad, tl_tensor *input, const int64_t *normalized_shape,
                                     int64_t nshape, tl_tensor *mean, tl_tensor *rstd, tl_tensor *weight,
                                     tl_tensor *bias, const bool *output_mask, int64_t nmask, tl_tensor **grad_input,
                                     tl_tensor **grad_weight, tl_tensor **grad_bias);
/* PyTorch's _convolution_double_backward (convolution_backward's derivative
 * for grad_output, input, weight; ggI / ggW / ggb may be NULL) from
 * convolution / convolution_backward calls (autograd_nn.c) */
int tl_ag__convolution_double_backward(tl_tensor *ggI, tl_tensor *ggW, tl_tensor *ggb, tl_tensor *gO,
                                       tl_tensor *weight, tl_tensor *self, const int64_t *stride, int64_t nstride,
                                       const int64_t *padding, int64_t npadding, const int64_t *dilation,
                                       int64_t ndilation, bool transposed, const int64_t *output_padding,
                                       int64_t noutput_padding, int64_t groups, const bool *output_mask,
                                       int64_t nmask, tl_tensor **grad_grad_output, tl_tensor **grad_input,
                                       tl_tensor **grad_weight);
/* native_dropout under create_graph: grad * (mask.type_as(grad) * scale) */
tl_tensor *tl_ag_infinitely_differentiable_native_dropout_backward(tl_tensor *grad, tl_tensor *mask, double scale);
/* native_dropout_backward's derivative for grad_output (PyTorch's FunctionsManual):
 * ggI.type_as(grad) * (mask.type_as(grad) * scale) */
tl_tensor *tl_ag_native_dropout_double_backward(tl_tensor *ggI, tl_tensor *grad, tl_tensor *mask, double scale);
/* logit under create_graph (PyTorch's infinitely_differentiable_logit_backward):
 * where(lo <= self <= hi, grad / (self * (1 - self)), 0 with eps / NaN without) */
tl_tensor *tl_ag_infinitely_differentiable_logit_backward(tl_tensor *grad, tl_tensor *self, double eps, bool eps_has);

/* special math (autograd_special.c): PyTorch's sinc_backward, i1_backward
 * (1/2 at |x| <= eps), deg2rad_backward, rad2deg_backward and mvlgamma_backward */
tl_tensor *tl_ag_sinc_backward(tl_tensor *grad, tl_tensor *self);
tl_tensor *tl_ag_i1_backward(tl_tensor *grad, tl_tensor *self, tl_tensor *result);
tl_tensor *tl_ag_deg2rad_backward(tl_tensor *grad);
tl_tensor *tl_ag_rad2deg_backward(tl_tensor *grad);
/* mvlgamma: grad * sum_i digamma(self - i/2), i < p */
tl_tensor *tl_ag_mvlgamma_backward(tl_tensor *grad, tl_tensor *self, int64_t p);

/* activations (autograd/autograd_activation.c; PyTorch's FunctionsManual.cpp
 * functions of the same names, built from entry points: differentiable again) */
tl_tensor *tl_ag_gelu_double_backward(tl_tensor *ggI, tl_tensor *gO, tl_tensor *input, const char *approximate);
tl_tensor *tl_ag_elu_double_backward(tl_tensor *grad, tl_tensor *grad_output, tl_scalar alpha, tl_scalar scale,
                                     tl_scalar input_scale, bool is_result, tl_tensor *self_or_result);
tl_tensor *tl_ag_softplus_double_backward(tl_tensor *grad, tl_tensor *input, tl_scalar beta, tl_scalar threshold);
tl_tensor *tl_ag_infinitely_differentiable_mish_backward(tl_tensor *grad_output, tl_tensor *input);
tl_tensor *tl_ag_infinitely_differentiable_silu_backward(tl_tensor *grad_output, tl_tensor *input);
tl_tensor *tl_ag_log_sigmoid_double_backward(tl_tensor *grad, tl_tensor *input);
tl_tensor *tl_ag_glu_double_backward(tl_tensor *grad, tl_tensor *grad_output, tl_tensor *input, int64_t dim);
tl_tensor *tl_ag_glu_double_backward_grad_output(tl_tensor *grad, tl_tensor *input, int64_t dim);

/* pointwise losses (autograd/autograd_activation.c; PyTorch's FunctionsManual.cpp
 * functions of the same names) */
tl_tensor *tl_ag_smooth_l1_loss_double_backward(tl_tensor *grad, tl_tensor *input, tl_tensor *target,
                                                int64_t reduction, double beta);
tl_tensor *tl_ag_huber_loss_double_backward(tl_tensor *grad, tl_tensor *input, tl_tensor *target, int64_t reduction,
                                            double delta);
tl_tensor *tl_ag_huber_loss_double_backward_grad_output(tl_tensor *grad, tl_tensor *grad_output, tl_tensor *input,
                                                        tl_tensor *target, int64_t reduction, double delta);
tl_tensor *tl_ag_soft_margin_loss_double_backward(tl_tensor *grad, tl_tensor *input, tl_tensor *target,
                                                  int64_t reduction);
tl_tensor *tl_ag_soft_margin_loss_double_backward_grad_output(tl_tensor *grad, tl_tensor *grad_output,
                                                              tl_tensor *input, tl_tensor *target,
                                                              int64_t reduction);
tl_tensor *tl_ag_binary_cross_entropy_target_backward(tl_tensor *grad, tl_tensor *self, tl_tensor *target,
                                                      tl_tensor *weight, int64_t reduction);
tl_tensor *tl_ag_binary_cross_entropy_double_backward(tl_tensor *grad_output, tl_tensor *grad, tl_tensor *input,
                                                      tl_tensor *target, tl_tensor *weight, int64_t reduction);
tl_tensor *tl_ag_binary_cross_entropy_double_backward_grad_output(tl_tensor *grad, tl_tensor *input,
                                                                  tl_tensor *target, tl_tensor *weight,
                                                                  int64_t reduction);
tl_tensor *tl_ag_binary_cross_entropy_double_backward_target(tl_tensor *grad, tl_tensor *grad_output,
                                                             tl_tensor *self, tl_tensor *target, tl_tensor *weight,
                                                             int64_t reduction);

/* indexing (PyTorch's FunctionsManual.cpp
 * functions of the same names, built from entry points) */
tl_tensor *tl_ag_masked_fill_backward(tl_tensor *grad, tl_tensor *mask);
tl_tensor *tl_ag_embedding_dense_double_backward(tl_tensor *grad, tl_tensor *indices, int64_t padding_idx);

/* pow (autograd/autograd_pow.c; PyTorch's pow_backward, pow_backward_self,
 * pow_backward_exponent; the Scalar-base overload of pow_backward_exponent is
 * named _scalar: one C name per helper) */
tl_tensor *tl_ag_pow_backward(tl_tensor *grad, tl_tensor *self, tl_scalar exponent);
tl_tensor *tl_ag_pow_backward_self(tl_tensor *grad, tl_tensor *self, tl_tensor *exponent);
tl_tensor *tl_ag_pow_backward_exponent(tl_tensor *grad, tl_tensor *self, tl_tensor *exponent, tl_tensor *result);
tl_tensor *tl_ag_pow_backward_exponent_scalar(tl_tensor *grad, tl_scalar self, tl_tensor *exponent,
                                              tl_tensor *result);
/* svd (autograd/autograd_svd.c): PyTorch's svd_backward for real inputs
 * (gradients of U, S and Vh; any of them may be NULL) */
tl_tensor *tl_ag_svd_backward(tl_tensor *gU, tl_tensor *gS, tl_tensor *gVh, tl_tensor *U, tl_tensor *S,
                              tl_tensor *Vh);

/* clamp (autograd/autograd_ternary.c; PyTorch's clamp_backward and
 * clamp_backward_min_max; the Tensor? overload of clamp_backward is named
 * _tensor: one C name per helper) */
tl_tensor *tl_ag_clamp_backward(tl_tensor *grad, tl_tensor *self, const tl_scalar *min, const tl_scalar *max);
tl_tensor *tl_ag_clamp_backward_tensor(tl_tensor *grad, tl_tensor *self, tl_tensor *min, tl_tensor *max);
int tl_ag_clamp_backward_min_max(tl_tensor *grad, tl_tensor *self, tl_tensor *min, tl_tensor *max,
                                 const bool *grad_input_mask, int64_t n, tl_tensor **grad_min, tl_tensor **grad_max);

/* reductions (autograd/autograd_reduce.c): max()/min(), amax/amin,
 * prod (prod_dim_backward: the dim overload), logsumexp, linalg_vector_norm,
 * cumsum, cumprod (once-differentiable when the input has zeros) */
tl_tensor *tl_ag_evenly_distribute_backward(tl_tensor *grad, tl_tensor *input, tl_tensor *value);
tl_tensor *tl_ag_restore_reduced_dims(tl_tensor *output, const int64_t *dims, int64_t ndims, bool keepdim);
tl_tensor *tl_ag_scale_grad_by_count(tl_tensor *grad, tl_tensor *mask, const int64_t *dims, int64_t ndims);
tl_tensor *tl_ag_prod_backward(tl_tensor *grad, tl_tensor *input, tl_tensor *result);
/* dim arrives as an int? pair (dim_has always true): the helper parser reads
 * `int64_t, bool` as an int? */
tl_tensor *tl_ag_prod_dim_backward(tl_tensor *grad, tl_tensor *input, tl_tensor *result, int64_t dim, bool dim_has,
                                   bool keepdim);
tl_tensor *tl_ag_logsumexp_backward(tl_tensor *grad, tl_tensor *self, tl_tensor *result, const int64_t *dims,
                                    int64_t ndims, bool keepdim);
tl_tensor *tl_ag_linalg_vector_norm_backward(tl_tensor *grad, tl_tensor *self, tl_scalar ord, tl_tensor *result,
                                             const int64_t *dims, int64_t ndims, bool keepdim);
tl_tensor *tl_ag_cumsum_backward(tl_tensor *grad, int64_t dim);
tl_tensor *tl_ag_cumprod_backward(tl_tensor *grad, tl_tensor *input, int64_t dim, tl_tensor *output);

/* NN operators (autograd/autograd_nn.c): the `output:` term of
 * _softmax_backward_data's derivative */
tl_tensor *tl_ag_softmax_double_backward(tl_tensor *grad, tl_tensor *grad_output, int64_t dim, tl_tensor *output);
/* _log_softmax_backward_data's derivative terms (PyTorch's inline formulas) */
tl_tensor *tl_ag_log_softmax_double_backward_grad_output(tl_tensor *grad, tl_tensor *output, int64_t dim);
tl_tensor *tl_ag_log_softmax_double_backward_output(tl_tensor *grad, tl_tensor *grad_output, int64_t dim,
                                                    tl_tensor *output);
/* pooling (autograd/autograd_nn.c): PyTorch's max_pool_double_backward, and
 * _adaptive_avg_pool2d_backward's grad_output term */
tl_tensor *tl_ag_max_pool_double_backward(tl_tensor *grad, tl_tensor *indices, int64_t dim);
tl_tensor *tl_ag_adaptive_avg_pool2d_double_backward(tl_tensor *grad, tl_tensor *grad_output);
tl_tensor *tl_ag_adaptive_avg_pool3d_double_backward(tl_tensor *grad, tl_tensor *grad_output); /* kernels/native/adaptive_pool3d.c */
/* padding: PyTorch's constant_pad_nd_backward */
tl_tensor *tl_ag_constant_pad_nd_backward(tl_tensor *grad, const int64_t *pad, int64_t npad);
/* addbmm: grad.unsqueeze(0).expand({batch1.size(0), batch1.size(1), batch2.size(2)}),
 * PyTorch's braced size list in one call (kernels/native/products.c) */
tl_tensor *tl_ag_addbmm_grad_batches(tl_tensor *grad, tl_tensor *batch1, tl_tensor *batch2);
/* dist: PyTorch's norm_backward (the full-tensor p-norm's gradient) */
tl_tensor *tl_ag_norm_backward(tl_tensor *grad, tl_tensor *self, tl_scalar p, tl_tensor *result);
/* _euclidean_dist: PyTorch's _euclidean_dist_backward, both gradients (kernels/native/cdist.c) */
int tl_ag__euclidean_dist_backward(tl_tensor *grad, tl_tensor *x1, tl_tensor *x2, tl_tensor *res, tl_tensor **grad_x1,
                                   tl_tensor **grad_x2);

/* selection (autograd/autograd_select.c): PyTorch's aminmax_backward (either
 * gradient may be undefined: NULL), nansum_backward, take_backward,
 * logcumsumexp_backward, block_diag_backward */
tl_tensor *tl_ag_aminmax_backward(tl_tensor *self, int64_t dim, bool dim_has, bool keepdim, tl_tensor *grad_min,
                                  tl_tensor *grad_max, tl_tensor *min, tl_tensor *max);
tl_tensor *tl_ag_nansum_backward(tl_tensor *grad, tl_tensor *self, const int64_t *dims, int64_t ndims, bool keepdim);
tl_tensor *tl_ag_take_backward(tl_tensor *grad, tl_tensor *self, tl_tensor *index);
tl_tensor *tl_ag_logcumsumexp_backward(tl_tensor *grad, tl_tensor *self, tl_tensor *result, int64_t dim);
/* block_diag: each input's block of grad, in its shape and dtype (a list, as cat's) */
int tl_ag_block_diag_backward(tl_tensor *grad, const int64_t *const *sizes, const int64_t *ndims, int64_t n,
                              const tl_dtype *dtypes, int64_t ndtypes, tl_tensor ***ret, int64_t *ret_len);
/* scatter_reduce.two / index_reduce / sgn (autograd/autograd_scatter.c): PyTorch's
 * scatter_reduce_backward and index_reduce_backward (gradients of self and
 * src / source; both NULL for an undefined grad) */
int tl_ag_scatter_reduce_backward(tl_tensor *grad, tl_tensor *self, int64_t dim, tl_tensor *index, tl_tensor *src,
                                  const char *reduce, bool include_self, tl_tensor *result, tl_tensor **grad_self,
                                  tl_tensor **grad_src);
int tl_ag_index_reduce_backward(tl_tensor *grad, tl_tensor *self, int64_t dim, tl_tensor *index, tl_tensor *source,
                                const char *reduce, bool include_self, tl_tensor *result, tl_tensor **grad_self,
                                tl_tensor **grad_source);
/* sgn (real dtypes) */
tl_tensor *tl_ag_sgn_backward(tl_tensor *self, tl_tensor *grad, tl_tensor *result);

/* LAPACK solvers (autograd/autograd_linalg_solve.c): PyTorch's
 * linalg_solve_backward, linalg_det_backward, slogdet_backward,
 * cholesky_backward for real inputs */
int tl_ag_linalg_solve_backward(tl_tensor *grad, tl_tensor *result, tl_tensor *A, tl_tensor *LU, tl_tensor *pivots,
                                bool left, bool B_requires_grad, tl_tensor **grad_A, tl_tensor **grad_B);
tl_tensor *tl_ag_linalg_det_backward(tl_tensor *grad, tl_tensor *det, tl_tensor *A, tl_tensor *LU, tl_tensor *pivots);
tl_tensor *tl_ag_slogdet_backward(tl_tensor *grad_sign, tl_tensor *grad_logabsdet, tl_tensor *A, tl_tensor *sign,
                                  tl_tensor *LU, tl_tensor *pivots);
tl_tensor *tl_ag_cholesky_backward(tl_tensor *grad, bool upper, tl_tensor *L);
tl_tensor *tl_ag_linalg_eig_backward(tl_tensor *gL, tl_tensor *gV, tl_tensor *L, tl_tensor *V, bool is_hermitian);
int tl_ag_linalg_solve_triangular_backward(tl_tensor *grad, tl_tensor *A, tl_tensor *X, bool upper, bool left,
                                           bool unitriangular, const bool *grad_input_mask, int64_t n,
                                           tl_tensor **grad_A, tl_tensor **grad_B);
int tl_ag_cholesky_solve_backward(tl_tensor *grad, tl_tensor *self, tl_tensor *input2, tl_tensor *result, bool upper,
                                  const bool *grad_input_mask, int64_t n, tl_tensor **grad_self,
                                  tl_tensor **grad_input2);
tl_tensor *tl_ag_cholesky_inverse_backward(tl_tensor *grad, tl_tensor *L, bool upper, tl_tensor *inverse);

/* PyTorch's batchnorm_double_backward (native_batch_norm_backward's
 * derivative; autograd/autograd_norm.c): ggI / ggG / ggB, weight and
 * the running / saved statistics may be NULL */
int tl_ag_batchnorm_double_backward(tl_tensor *input, tl_tensor *gamma, tl_tensor *ggI, tl_tensor *ggG,
                                    tl_tensor *ggB, tl_tensor *gO, tl_tensor *running_mean, tl_tensor *running_var,
                                    bool training, double eps, tl_tensor *save_mean, tl_tensor *save_invstd,
                                    const bool *output_mask, int64_t nmask, tl_tensor **grad_input,
                                    tl_tensor **grad_weight, tl_tensor **grad_grad_out);

/* native_group_norm_backward's derivative (autograd/autograd_norm.c):
 * batchnorm_double_backward on the [1, N * group, -1] view, gamma around it */
int tl_ag_group_norm_double_backward(tl_tensor *ggI, tl_tensor *ggG, tl_tensor *ggB, tl_tensor *gO, tl_tensor *input,
                                     tl_tensor *mean, tl_tensor *rstd, tl_tensor *weight, int64_t N, int64_t C,
                                     int64_t HxW, int64_t group, const bool *output_mask, int64_t nmask,
                                     tl_tensor **grad_grad_out, tl_tensor **grad_input, tl_tensor **grad_weight);

/* native_group_norm's backward from all three outputs' gradients (the mean
 * and rstd outputs are differentiable), composed of operators
 * (autograd/autograd_norm.c) */
int tl_ag_infinitely_differentiable_native_group_norm_backward(
    tl_tensor *dY, tl_tensor *dmean, tl_tensor *drstd, tl_tensor *input, tl_tensor *mean, tl_tensor *rstd,
    tl_tensor *weight, int64_t N, int64_t C, int64_t HxW, int64_t group, double eps, const bool *output_mask,
    int64_t nmask, tl_tensor **d_input, tl_tensor **d_weight, tl_tensor **d_bias);

/* decompositions (autograd/autograd_linalg_decomp.c): PyTorch's backward
 * helpers of LU, QR, householder_product, ormqr, triangular_solve, lstsq,
 * pinv and matrix_exp for real inputs */
tl_tensor *tl_ag_linalg_lu_backward(tl_tensor *gL, tl_tensor *gU, tl_tensor *P, tl_tensor *L, tl_tensor *U,
                                    bool pivot);
tl_tensor *tl_ag_lu_factor_ex_backward(tl_tensor *grad, tl_tensor *LU, tl_tensor *pivots, bool pivot);
tl_tensor *tl_ag_linalg_lu_solve_LU(tl_tensor *gX, tl_tensor *LU, tl_tensor *pivots, tl_tensor *X, bool left,
                                    bool adjoint);
tl_tensor *tl_ag_lu_unpack_backward(tl_tensor *gL, tl_tensor *gU, int64_t m, int64_t n);
tl_tensor *tl_ag_linalg_qr_backward(tl_tensor *gQ, tl_tensor *gR, tl_tensor *Q, tl_tensor *R, const char *mode);
int tl_ag_householder_product_backward(tl_tensor *grad, tl_tensor *result, tl_tensor *input, tl_tensor *tau,
                                       tl_tensor **grad_input, tl_tensor **grad_tau);
int tl_ag_ormqr_backward(tl_tensor *grad, tl_tensor *result, tl_tensor *self, tl_tensor *input2, tl_tensor *input3,
                         bool left, bool transpose, const bool *grad_input_mask, int64_t n, tl_tensor **grad_self,
                         tl_tensor **grad_input2, tl_tensor **grad_input3);
int tl_ag_triangular_solve_backward(tl_tensor *grad_x, tl_tensor *grad_m, tl_tensor *b, tl_tensor *a, tl_tensor *x,
                                    bool upper, bool transpose, bool unitriangular, const bool *grad_input_mask,
                                    int64_t n, tl_tensor **grad_b, tl_tensor **grad_a);
tl_tensor *tl_ag_pinv_backward(tl_tensor *grad, tl_tensor *pinvA, tl_tensor *A);
int tl_ag_linalg_lstsq_backward(tl_tensor *gX, tl_tensor *gL, tl_tensor *A, tl_tensor *B, tl_tensor *X,
                                const bool *grad_input_mask, int64_t n, tl_tensor **grad_A, tl_tensor **grad_B);
tl_tensor *tl_ag_linalg_matrix_exp_differential(tl_tensor *self, tl_tensor *grad, bool adjoint);
/* 3-d pooling, fold / unfold, max_unpool, embedding_bag, multilabel_margin_loss:
 * im2col's derivative, col2im back to the input's spatial size (kernels/native/fold.c) */
tl_tensor *tl_ag_im2col_backward(tl_tensor *grad, tl_tensor *self, const int64_t *kernel_size,
                                 int64_t kernel_size_len, const int64_t *dilation, int64_t dilation_len,
                                 const int64_t *padding, int64_t padding_len, const int64_t *stride,
                                 int64_t stride_len);
/* complex dtypes and FFT (kernels/native/fft.c): FunctionsManual's
 * fft_r2c_backward (the half spectrum zero-padded to last_dim_size, an
 * inverse c2c, the real part) and fft_c2r_backward (r2c, the mirrored bins
 * doubled) */
tl_tensor *tl_ag_fft_r2c_backward(tl_tensor *grad, const int64_t *dim, int64_t dim_len, int64_t normalization,
                                  bool onesided, int64_t last_dim_size);
tl_tensor *tl_ag_fft_c2r_backward(tl_tensor *grad, const int64_t *dim, int64_t dim_len, int64_t normalization);
/* FunctionsManual's angle_backward (zeros for a real self; grad * i z / |z|^2,
 * 0 at z == 0, for a complex one) and polar_backward (kernels/native/complex_ops.c) */
tl_tensor *tl_ag_angle_backward(tl_tensor *grad, tl_tensor *self);
int tl_ag_polar_backward(tl_tensor *grad, tl_tensor *result, tl_tensor **grad_abs, tl_tensor **grad_angle);

#endif
