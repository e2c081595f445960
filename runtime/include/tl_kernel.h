/* torchlet kernel machinery (internal, used by runtime/src, kernels/cpu and
 * generated kernels). NOT in the cdef.
 *
 * Every kernel source in kernels/cpu is compiled three times with
 * -DCPU_CAPABILITY=DEFAULT|AVX2|AVX512 and the matching -m flags, so each
 * symbol it defines through TL_KNAME(x) exists as x_DEFAULT, x_AVX2, x_AVX512.
 * A kernel stub (DispatchStub) holds the three tables and points at the one the
 * current CPU capability selects; tl_set_cpu_capability switches every stub.
 */
#ifndef TL_KERNEL_H
#define TL_KERNEL_H

#include <stdint.h>
#include "tl_dtype.h"
#include "tl_iter.h"

#define TL_CAP_DEFAULT 0
#define TL_CAP_AVX2 1
#define TL_CAP_AVX512 2
#define TL_NUM_CAPS 3

#define TL_CAT_(a, b) a##_##b
#define TL_CAT(a, b) TL_CAT_(a, b)
#ifdef CPU_CAPABILITY
#define TL_KNAME(name) TL_CAT(name, CPU_CAPABILITY)
#endif

typedef struct tl_kernel_stub {
    const char *name;
    const void *impl[TL_NUM_CAPS];   /* table per capability (DEFAULT, AVX2, AVX512) */
    const void *current;             /* the selected one */
    struct tl_kernel_stub *next;
} tl_kernel_stub;

/* links the stub into the global list and selects its current table;
 * call from a constructor (see TL_REGISTER_STUB) */
void tl_kernel_stub_register(tl_kernel_stub *stub);

/* defines `tl_kernel_stub stub_name` from the three tables `table_DEFAULT`,
 * `table_AVX2`, `table_AVX512` and registers it at load time */
#define TL_DEFINE_STUB(stub_name, table)                                            \
    tl_kernel_stub stub_name = {#stub_name, {table##_DEFAULT, table##_AVX2, table##_AVX512}, \
                                table##_DEFAULT, 0};                                 \
    __attribute__((constructor)) static void stub_name##_register(void) {           \
        tl_kernel_stub_register(&stub_name);                                         \
    }

/* The stubs the runtime itself calls through (copy, fill, TensorIterator's
 * tiled walk) are defined empty in the runtime and filled from the kernels'
 * side (kernels/native/runtime_stubs.c), so the runtime never names a kernel:
 *   runtime:  TL_DEFINE_EMPTY_STUB(tl_copy_stub);
 *   kernels:  TL_FILL_STUB(tl_copy_stub, tl_copy_table_DEFAULT, tl_copy_table_AVX2, tl_copy_table_AVX512)
 * The constructor runs when the library loads, before any operator call. */
#define TL_DEFINE_EMPTY_STUB(stub_name) tl_kernel_stub stub_name = {#stub_name, {0, 0, 0}, 0, 0}
#define TL_FILL_STUB(stub_name, def, avx2, avx512)                                  \
    __attribute__((constructor)) static void stub_name##_fill(void) {               \
        stub_name.impl[TL_CAP_DEFAULT] = (def);                                      \
        stub_name.impl[TL_CAP_AVX2] = (avx2);                                        \
        stub_name.impl[TL_CAP_AVX512] = (avx512);                                    \
        tl_kernel_stub_register(&stub_name);                                         \
    }

/* ---- the usual shape of a kernel: one inner loop per dtype.
 *
 *   kernels/cpu/foo_kernel.c (compiled once per capability):
 *       const tl_dtype_loops_t TL_KNAME(tl_foo_loops) = {[TL_FLOAT32] = TL_KNAME(foo_f32), ...};
 *   one non-kernel .c file:
 *       TL_DECLARE_LOOPS(tl_foo_loops);
 *       TL_DEFINE_STUB(tl_foo_stub, tl_foo_loops)
 *   the caller, after tl_iter_build:
 *       tl_loop_fn loop = TL_STUB_LOOP(tl_foo_stub, tl_iter_common_dtype(it));
 *       if (!loop) -> NotImplementedError naming the dtype
 *       tl_iter_for_each(it, loop, ctx);
 */
typedef tl_loop_fn tl_dtype_loops_t[TL_NUM_DTYPES];
#define TL_DECLARE_LOOPS(table) \
    extern const tl_dtype_loops_t table##_DEFAULT, table##_AVX2, table##_AVX512
#define TL_STUB_LOOP(stub, dt) ((*(const tl_dtype_loops_t *)(stub).current)[dt])

/* ---- copy: loop table [dst dtype][src dtype]; data[0] = dst, data[1] = src */
typedef tl_loop_fn tl_copy_table_t[TL_NUM_DTYPES][TL_NUM_DTYPES];
extern const tl_copy_table_t tl_copy_table_DEFAULT, tl_copy_table_AVX2, tl_copy_table_AVX512;
extern tl_kernel_stub tl_copy_stub;
#define TL_COPY_LOOP(dst_dt, src_dt) \
    ((*(const tl_copy_table_t *)tl_copy_stub.current)[dst_dt][src_dt])

/* ---- fill: loop table [dtype]; data[0] = out, ctx = pointer to the value
 * already stored in the out dtype */
typedef tl_loop_fn tl_fill_table_t[TL_NUM_DTYPES];
extern const tl_fill_table_t tl_fill_table_DEFAULT, tl_fill_table_AVX2, tl_fill_table_AVX512;
extern tl_kernel_stub tl_fill_stub;
#define TL_FILL_LOOP(dt) ((*(const tl_fill_table_t *)tl_fill_stub.current)[dt])

/* ---- tiled walk of TensorIterator (kernels/cpu/tile_kernel.c, runtime/src/iter.c):
 * transpose[log2 itemsize]: dst[c * dst_row + r * isz] = src[r * src_row + c * isz]
 * for r < rows, c < cols (bytes); stream: dst <- src with non-temporal stores
 * for dst's whole 64-byte lines; fence: orders those stores */
typedef void (*tl_transpose_fn)(char *dst, int64_t dst_row, const char *src, int64_t src_row, int64_t rows,
                                int64_t cols);
typedef struct {
    tl_transpose_fn transpose[4];
    void (*stream)(char *dst, const char *src, int64_t nbytes);
    void (*fence)(void);
} tl_tile_kernels_t;
extern const tl_tile_kernels_t tl_tile_kernels_DEFAULT, tl_tile_kernels_AVX2, tl_tile_kernels_AVX512;
extern tl_kernel_stub tl_tile_stub;

/* true when every operand's stride equals its element size */
static inline int tl_loop_is_contiguous(const int64_t *strides, const int64_t *itemsizes, int nops) {
    for (int i = 0; i < nops; i++)
        if (strides[i] != itemsizes[i]) return 0;
    return 1;
}

#endif
