/* torchlet's public C API: its version, for libraries compiled against it.
 *
 * The public C API is what operator libraries (docs/GENERATOR.md, "Operator
 * libraries") and C kernel libraries (docs/EXTENDING.md, "Kernels in C") call:
 * the declarations of tl_abi.h, tl_error.h, tl_dtype.h, tl_tensor.h,
 * tl_runtime.h, tl_iter.h, tl_kernel.h, tl_ufunc.h, tl_structured.h,
 * tl_glue_ext.h, tl_dispatch_key.h, tl_ivalue.h, tl_dispatch.h, tl_autograd.h
 * and the generated tl_ops.h / tl_autograd_ops.h (every aten operator's entry
 * point), plus autograd/tl_autograd_formulas.h for derivative formulas. They
 * are exported by torchlet._C, which torchlet.utils.cpp_extension makes
 * global before a library loads, so the library links against nothing.
 *
 * TL_ABI_VERSION changes whenever one of those declarations changes in a way
 * that breaks a compiled library (a struct layout, a signature, an enum value,
 * an aten operator's C signature or removal); adding functions keeps it. A
 * library records the version it was compiled with and refuses to register
 * its operators into a torchlet of another version (tl_abi_check).
 */
#ifndef TL_ABI_H
#define TL_ABI_H

#define TL_ABI_VERSION 1

/* the version of the running torchlet (the TL_ABI_VERSION it was built with) */
int tl_abi_version(void);

/* 0 when a library named `library`, compiled against ABI `built`, can run in
 * this torchlet; otherwise -1 with an ImportError-worthy RuntimeError set */
int tl_abi_check(const char *library, int built);

#endif
