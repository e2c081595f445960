/* Kernels of the backward operators declared for derivative formulas
 * (yaml/native_functions.yaml: threshold_backward). */
#include "tl_iter.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/threshold_backward.h"

/* threshold_backward: grad_output where self > threshold, else 0 */
typedef struct {
    tl_scalar threshold;
    tl_dtype dt;
} thr_ctx;

static void thr_loop(char **data, const int64_t *strides, int64_t n, void *vctx) {
    const thr_ctx *c = vctx;
    char *out = data[0], *g = data[1], *x = data[2];
    if (c->dt == TL_FLOAT32) {
        float th = c->threshold.kind == TL_SCALAR_DOUBLE ? (float)c->threshold.d : (float)c->threshold.i;
        for (int64_t i = 0; i < n; i++) {
            float xv = *(const float *)(x + i * strides[2]);
            *(float *)(out + i * strides[0]) = xv <= th ? 0.0f : *(const float *)(g + i * strides[1]);
        }
        return;
    }
    if (c->dt == TL_FLOAT64) {
        double th = c->threshold.kind == TL_SCALAR_DOUBLE ? c->threshold.d : (double)c->threshold.i;
        for (int64_t i = 0; i < n; i++) {
            double xv = *(const double *)(x + i * strides[2]);
            *(double *)(out + i * strides[0]) = xv <= th ? 0.0 : *(const double *)(g + i * strides[1]);
        }
        return;
    }
    /* other dtypes through scalars (slow path, rare) */
    double th = c->threshold.kind == TL_SCALAR_DOUBLE ? c->threshold.d : (double)c->threshold.i;
    tl_scalar zero = tl_scalar_from_int(0);
    for (int64_t i = 0; i < n; i++) {
        tl_scalar xv, gv;
        tl_scalar_load(x + i * strides[2], c->dt, &xv);
        tl_scalar_load(g + i * strides[1], c->dt, &gv);
        double xd = xv.kind == TL_SCALAR_DOUBLE ? xv.d : (double)xv.i;
        tl_scalar_store(xd <= th ? zero : gv, c->dt, out + i * strides[0]);
    }
}

/* relu's gradient: grad_output where self > threshold, else 0 (CPU and Meta) */
tl_tensor *tl_native_threshold_backward(tl_keyset ks, tl_tensor *grad_output, tl_tensor *self, tl_scalar threshold) {
    (void)ks;
    tl_iter *it = tl_iter_new(TL_ITER_BINARY_OP);
    if (!it) return NULL;
    tl_tensor *result = NULL;
    if (tl_iter_add_output(it, NULL) == 0 && tl_iter_add_input(it, grad_output) == 0 &&
        tl_iter_add_input(it, self) == 0 && tl_iter_build(it) == 0) {
        thr_ctx c = {threshold, tl_iter_common_dtype(it)};
        if (tl_iter_is_meta(it) || tl_iter_for_each(it, thr_loop, &c) == 0) result = tl_iter_output(it, 0);
    }
    tl_iter_free(it);
    return result;
}
