/* addcmul.out: self + value * tensor1 * tensor2, in the common dtype of the
 * three inputs (PyTorch's addcmul_cpu_kernel; integers wrap). Bool has no loop,
 * as in PyTorch.
 * ufunc_error_name: addcmul_cpu_out
 */
#define TL_UFUNC_addcmul(self, tensor1, tensor2, value) ((self) + (value) * (tensor1) * (tensor2))
