/* The CUDA copy / cast / fill kernels' formula (codegen/emit/ufunc_cuda.py
 * renders it as generated/cuda/ufunc_copy.cu, a CUDA-only program): the
 * identity. Its casting kernel converts any stored dtype into the
 * destination's (one rounding: the load converts straight into the
 * destination's compute type), its strided kernel copies or, with the value
 * as a CPU-scalar input, fills a strided view. kernels/cuda/tl_cuda_copy.c
 * installs them as the runtime's copy and fill kernels. */
#define TL_UFUNC_copy(self) (self)
