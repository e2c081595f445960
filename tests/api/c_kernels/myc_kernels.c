/* A user's operator library in C, built and loaded by tests/api/test_c_kernels.py
 * and benchmarks/bench_ops_call.py (docs/EXTENDING.md, "Kernels in C"):
 *
 *   gcc -shared -fPIC -Wall -Wextra -Werror -I "$(python -c 'import torchlet.library as l;
 *       print(l.c_include_dir())')" myc_kernels.c -o libmyc.so
 *
 * Two ways to register:
 *   - myc_scale_boxed: a boxed kernel for "myc::scale(Tensor x, float alpha) -> Tensor"
 *     that Python registers (torchlet.library.register_c_kernel);
 *   - a constructor that defines "myc2::twice(Tensor x) -> Tensor" and registers
 *     its CPU kernel itself when the library is loaded (torchlet.library.load_library).
 *
 * The tl_* symbols are resolved at load time against the already loaded
 * runtime (torchlet._C, made global by load_library): this file links nothing.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tl_dispatch.h"
#include "tl_error.h"
#include "tl_tensor.h"

/* x * alpha as a new contiguous tensor; NULL with the error set for what it does not serve */
static tl_tensor *scaled(const char *opname, tl_tensor *x, double alpha) {
    tl_dtype dt = tl_tensor_dtype(x);
    if (tl_tensor_device(x) != TL_CPU) {
        tl_set_error(TL_ERR_RUNTIME, "%s: expected a CPU tensor", opname);
        return NULL;
    }
    if (dt != TL_FLOAT32 && dt != TL_FLOAT64) {
        tl_set_error(TL_ERR_TYPE, "%s: expected a float32 or float64 tensor, got %s", opname,
                     tl_dtype_name(dt));
        return NULL;
    }
    if (!tl_tensor_is_contiguous(x)) {
        tl_set_error(TL_ERR_RUNTIME, "%s: expected a contiguous tensor (call .contiguous() first)", opname);
        return NULL;
    }
    tl_tensor *out = tl_empty(tl_tensor_ndim(x), tl_tensor_sizes(x), dt, TL_CPU);
    if (out == NULL)
        return NULL;                      /* tl_empty set the error (MemoryError) */
    int64_t n = tl_tensor_numel(x);
    if (dt == TL_FLOAT32) {
        const float *src = tl_tensor_data_ptr(x);
        float *dst = tl_tensor_data_ptr(out);
        float a = (float)alpha;
        for (int64_t i = 0; i < n; i++)
            dst[i] = src[i] * a;
    } else {
        const double *src = tl_tensor_data_ptr(x);
        double *dst = tl_tensor_data_ptr(out);
        for (int64_t i = 0; i < n; i++)
            dst[i] = src[i] * alpha;
    }
    return out;
}

/* The boxed kernel: the arguments were pushed in schema order, so alpha is on top.
 * kernel->ctx, when set (register_c_kernel(ctx=)), points at an int64 call counter. */
int myc_scale_boxed(const tl_kernel *kernel, const tl_operator *op, tl_keyset ks, tl_stack *stack) {
    (void)op;
    (void)ks;
    double alpha;
    tl_tensor *x;
    if (tl_stack_pop_double(stack, &alpha) < 0)
        return -1;
    if (tl_stack_pop_tensor(stack, &x) < 0)     /* a new reference: released below */
        return -1;
    if (kernel->ctx != NULL)
        __atomic_fetch_add((int64_t *)kernel->ctx, 1, __ATOMIC_RELAXED);
    tl_tensor *out = scaled("myc::scale", x, alpha);
    tl_tensor_release(x);
    if (out == NULL)
        return -1;
    return tl_stack_push_tensor_steal(stack, out);   /* the stack takes out's reference */
}

static int myc2_twice_boxed(const tl_kernel *kernel, const tl_operator *op, tl_keyset ks,
                            tl_stack *stack) {
    (void)kernel;
    (void)op;
    (void)ks;
    tl_tensor *x;
    if (tl_stack_pop_tensor(stack, &x) < 0)
        return -1;
    tl_tensor *out = scaled("myc2::twice", x, 2.0);
    tl_tensor_release(x);
    if (out == NULL)
        return -1;
    return tl_stack_push_tensor_steal(stack, out);
}

/* What the constructor did: 0 = registered, -1 = failed (myc2_register_error says why).
 * A constructor cannot raise; the loader reads these through the ctypes handle. */
int myc2_register_status = 1;
char myc2_register_error[256];
int64_t myc2_register_id;

__attribute__((constructor)) static void myc2_register(void) {
    tl_operator *op = tl_op_define("myc2::twice", "twice(Tensor x) -> Tensor");
    int64_t id = op ? tl_op_register_kernel(op, TL_KEY_CPU, NULL, myc2_twice_boxed, NULL,
                                            "myc2_twice_cpu (C kernel)")
                    : -1;
    if (id < 0) {
        snprintf(myc2_register_error, sizeof myc2_register_error, "%s", tl_error_message());
        tl_clear_error();
        myc2_register_status = -1;
        return;
    }
    myc2_register_id = id;
    myc2_register_status = 0;
}
