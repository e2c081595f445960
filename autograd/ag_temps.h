/* The temporaries of one backward helper call (autograd_linalg_solve.c,
 * autograd_linalg_decomp.c): every intermediate tensor is held, and released
 * together at the end; a NULL (an error already set) passes through. */
#ifndef TL_AG_TEMPS_H
#define TL_AG_TEMPS_H

#include "tl_error.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/transpose.h"
#include "tl_tensor.h"

#define AG_MAX_TEMPS 96

typedef struct {
    tl_tensor *held[AG_MAX_TEMPS];
    int count;
} temps;

static inline tl_tensor *hold(temps *t, tl_tensor *x) {
    if (!x) return NULL;
    if (t->count == AG_MAX_TEMPS) {
        tl_tensor_release(x);
        tl_set_error(TL_ERR_RUNTIME, "linalg backward: too many temporaries");
        return NULL;
    }
    return t->held[t->count++] = x;
}

/* releases the temporaries; r (if any) survives as a new reference */
static inline tl_tensor *finish(temps *t, tl_tensor *r) {
    if (r) tl_tensor_retain(r);
    for (int i = 0; i < t->count; i++) tl_tensor_release(t->held[i]);
    t->count = 0;
    return r;
}

/* x^T (the last two dims), held */
static inline tl_tensor *tr(temps *t, tl_tensor *x) { return x ? hold(t, tl_ops_transpose_int(x, -2, -1)) : NULL; }

#endif
