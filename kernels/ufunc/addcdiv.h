/* addcdiv.out: self + value * tensor1 / tensor2 (PyTorch's addcdiv_cpu_kernel).
 * Floating loops only: integer tensor1 and tensor2 are refused by the meta
 * function (kernels/native/ternary_ops.c), so an integral common dtype never
 * reaches the loop table.
 * ufunc_error_name: addcdiv_cpu_out
 */
#define TL_UFUNC_addcdiv(self, tensor1, tensor2, value) ((self) + (value) * (tensor1) / (tensor2))
