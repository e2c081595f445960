/* all / any (structured: all.all_out, all.out (one dim), all.dims_out (a
 * dim list), the same for any).
 *
 * Result dtype: bool, or uint8 for a uint8 input (PyTorch's legacy rule); an
 * out= tensor must be bool or uint8. `dim=None` reduces every dim, `dim=[]`
 * none (the values only become bool). Elements are tested through a bool
 * conversion (NaN is true), then AND / OR over the rows layout.
 */
#include <string.h>

#include "reduce_util.h"
#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/all.h"
#include "ops/any.h"
#include "tl_structured.h"

static int allany_meta(tl_structured *s, const char *name, const tl_tensor *self, uint64_t mask, bool keepdim) {
    tl_dtype dt = tl_tensor_dtype(self) == TL_UINT8 ? TL_UINT8 : TL_BOOL;
    if (s->kind == TL_STRUCTURED_OUT && s->outputs[0]) {
        dt = tl_tensor_dtype(s->outputs[0]);
        if (dt != TL_BOOL && dt != TL_UINT8)
            return tl_set_error(TL_ERR_RUNTIME, "%s only supports bool tensor for result, got: %s", name,
                                tl_dtype_scalar_name(dt));
    }
    int64_t shape[TL_RD_MAXD];
    const int64_t k = tl_rd_shape(self, mask, keepdim, shape);
    return tl_structured_set_output(s, 0, k, shape, NULL, dt);
}

static int allany_impl(const tl_tensor *self, uint64_t mask, int is_all, tl_tensor *out) {
    int64_t O, R;
    tl_rd_counts(self, mask, &O, &R);
    if (O == 0) return 0;
    tl_tensor *rows = tl_rd_rows(self, mask, TL_BOOL);
    if (!rows) return -1;
    tl_tensor *t = tl_rd_target(out, TL_BOOL);
    if (!t) {
        tl_tensor_release(rows);
        return -1;
    }
    const uint8_t *p = tl_tensor_data_ptr(rows);
    uint8_t *o = tl_tensor_data_ptr(t);
    for (int64_t j = 0; j < O; j++) {
        const uint8_t *r = p + j * R;
        uint8_t a = (uint8_t)is_all;
        /* a miss in the row decides it: memchr finds it at memory speed */
        if (R > 0) a = is_all ? memchr(r, 0, (size_t)R) == NULL : memchr(r, 1, (size_t)R) != NULL;
        o[j] = a;
    }
    tl_tensor_release(rows);
    return tl_rd_commit(out, t);
}

/* `int[]? dim`: None -> every dim, [] -> none */
static int dims_mask(const tl_tensor *self, const int64_t *dim, int64_t dim_len, uint64_t *mask) {
    if (dim && dim_len == 0) {
        *mask = 0;
        return 0;
    }
    return tl_rd_mask(self, dim, dim_len, mask);
}

#define TL_DEF_ALLANY(NAME, IS_ALL)                                                                           \
    int tl_meta_##NAME(tl_structured *s, tl_tensor *self) {                                                 \
        uint64_t mask;                                                                                        \
        if (tl_rd_mask(self, NULL, 0, &mask)) return -1;                                                      \
        return allany_meta(s, #NAME, self, mask, false);                                                      \
    }                                                                                                         \
    int tl_impl_##NAME##_all_out(tl_structured *s, tl_tensor *self, tl_tensor *out) {                         \
        (void)s;                                                                                              \
        uint64_t mask;                                                                                        \
        if (tl_rd_mask(self, NULL, 0, &mask)) return -1;                                                      \
        return allany_impl(self, mask, IS_ALL, out);                                                          \
    }                                                                                                         \
    int tl_meta_##NAME##_dim(tl_structured *s, tl_tensor *self, int64_t dim, bool keepdim) {                \
        uint64_t mask;                                                                                        \
        if (tl_rd_mask(self, &dim, 1, &mask)) return -1;                                                      \
        return allany_meta(s, #NAME, self, mask, keepdim);                                                    \
    }                                                                                                         \
    int tl_impl_##NAME##_out(tl_structured *s, tl_tensor *self, int64_t dim, bool keepdim, tl_tensor *out) {  \
        (void)s; (void)keepdim;                                                                               \
        uint64_t mask;                                                                                        \
        if (tl_rd_mask(self, &dim, 1, &mask)) return -1;                                                      \
        return allany_impl(self, mask, IS_ALL, out);                                                          \
    }                                                                                                         \
    int tl_meta_##NAME##_dims(tl_structured *s, tl_tensor *self, const int64_t *dim, int64_t dim_len,         \
                              bool keepdim) {                                                                 \
        uint64_t mask;                                                                                        \
        if (dims_mask(self, dim, dim_len, &mask)) return -1;                                                  \
        return allany_meta(s, #NAME, self, mask, keepdim);                                                    \
    }                                                                                                         \
    int tl_impl_##NAME##_dims_out(tl_structured *s, tl_tensor *self, const int64_t *dim, int64_t dim_len,     \
                                  bool keepdim, tl_tensor *out) {                                             \
        (void)s; (void)keepdim;                                                                               \
        uint64_t mask;                                                                                        \
        if (dims_mask(self, dim, dim_len, &mask)) return -1;                                                  \
        return allany_impl(self, mask, IS_ALL, out);                                                          \
    }

TL_DEF_ALLANY(all, 1)
TL_DEF_ALLANY(any, 0)
