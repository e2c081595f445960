/* A pool of the temporaries one derivative helper makes over operator entry
 * points (tl_ops_*), released together, and NULL-propagating steps: each
 * step takes NULL (an earlier step failed, its error set) to NULL, so a
 * formula is written as a chain of calls with one check at its end. Used
 * by autograd_svd.c and autograd_batchnorm.c. */
#ifndef TL_AG_POOL_H
#define TL_AG_POOL_H

#include "tl_error.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/add.h"
#include "ops/div.h"
#include "ops/mul.h"
#include "ops/sub.h"
#include "ops/unsqueeze.h"
#include "tl_tensor.h"

#define TL_AG_POOL_CAP 96

typedef struct {
    tl_tensor *t[TL_AG_POOL_CAP];
    int n;
} pool;

static inline tl_tensor *keep(pool *p, tl_tensor *t) {
    if (t && p->n == TL_AG_POOL_CAP) {
        tl_tensor_release(t);
        tl_set_error(TL_ERR_RUNTIME, "autograd helper: too many temporaries");
        return NULL;
    }
    if (t) p->t[p->n++] = t;
    return t;
}

static inline void pool_release(pool *p) {
    for (int i = 0; i < p->n; i++) tl_tensor_release(p->t[i]);
    p->n = 0;
}

/* a pooled tensor handed to the caller: a new reference (NULL stays NULL) */
static inline tl_tensor *pool_out(tl_tensor *t) {
    if (t) tl_tensor_retain(t);
    return t;
}

static inline tl_tensor *mul(pool *p, tl_tensor *a, tl_tensor *b) {
    return a && b ? keep(p, tl_ops_mul_Tensor(a, b)) : NULL;
}

static inline tl_tensor *divide(pool *p, tl_tensor *a, tl_tensor *b) {
    return a && b ? keep(p, tl_ops_div_Tensor(a, b)) : NULL;
}

static inline tl_tensor *add(pool *p, tl_tensor *a, tl_tensor *b) {
    return a && b ? keep(p, tl_ops_add_Tensor(a, b, tl_scalar_from_int(1))) : NULL;
}

static inline tl_tensor *sub(pool *p, tl_tensor *a, tl_tensor *b) {
    return a && b ? keep(p, tl_ops_sub_Tensor(a, b, tl_scalar_from_int(1))) : NULL;
}

static inline tl_tensor *unsq(pool *p, tl_tensor *x, int64_t d) {
    return x ? keep(p, tl_ops_unsqueeze(x, d)) : NULL;
}

#endif
