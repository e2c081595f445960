/* Glue for the corpus-only schema conventions (runtime/include/tl_glue_ext.h). */
#include "tl_glue_ext.h"

#include "tl_error.h"

int tl_glue_push_scalar_list(tl_stack *st, const tl_scalar *v, int64_t n) {
    if (!v) return tl_stack_push_none(st);
    bool integral = true;
    for (int64_t i = 0; i < n; i++)
        if (v[i].kind == TL_SCALAR_DOUBLE) integral = false;
    size_t bytes = (size_t)(n > 0 ? n : 1) * (integral ? sizeof(int64_t) : sizeof(double));
    void *buf = malloc(bytes);
    if (!buf) return tl_set_error(TL_ERR_MEMORY, "out of memory");
    int rc;
    if (integral) {
        int64_t *ints = (int64_t *)buf;
        for (int64_t i = 0; i < n; i++) ints[i] = v[i].i;
        rc = tl_stack_push_int_list(st, ints, n);
    } else {
        double *ds = (double *)buf;
        for (int64_t i = 0; i < n; i++) ds[i] = v[i].kind == TL_SCALAR_DOUBLE ? v[i].d : (double)v[i].i;
        rc = tl_stack_push_double_list(st, ds, n);
    }
    free(buf);
    return rc;
}

int tl_glue_pop_scalar_list(tl_stack *st, int nullable, tl_scalar **out, int64_t *n) {
    *out = NULL;
    *n = 0;
    tl_ivalue *top = tl_stack_peek(st, 0);
    if (!top) return tl_set_error(TL_ERR_RUNTIME, "pop from an empty stack");
    int tag = top->tag == TL_IV_DOUBLE_LIST ? TL_IV_DOUBLE_LIST : TL_IV_INT_LIST;
    tl_ivalue iv;
    if (tl_glue_pop_list(st, tag, nullable, &iv) != 0) return -1;
    if (iv.tag == TL_IV_NONE) return 0;
    int64_t len = tag == TL_IV_INT_LIST ? iv.u.ints.len : iv.u.doubles.len;
    tl_scalar *r = (tl_scalar *)calloc((size_t)(len > 0 ? len : 1), sizeof(tl_scalar));
    if (!r) {
        tl_ivalue_destroy(&iv);
        return tl_set_error(TL_ERR_MEMORY, "out of memory");
    }
    for (int64_t i = 0; i < len; i++) {
        if (tag == TL_IV_INT_LIST) {
            r[i].kind = TL_SCALAR_INT;
            r[i].i = iv.u.ints.data[i];
        } else {
            r[i].kind = TL_SCALAR_DOUBLE;
            r[i].d = iv.u.doubles.data[i];
        }
    }
    tl_ivalue_destroy(&iv);
    *out = r;
    *n = len;
    return 0;
}

int tl_glue_push_storage(tl_stack *st, tl_storage *v) {
    (void)st;
    (void)v;
    return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "a Storage argument cannot be boxed: torchlet has no Storage ivalue");
}

int tl_glue_pop_storage(tl_stack *st, tl_storage **out) {
    (void)st;
    *out = NULL;
    return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "a Storage argument cannot be boxed: torchlet has no Storage ivalue");
}

int tl_glue_structured_finish_n(tl_structured *s, int n, tl_tensor **rets[]) {
    tl_tensor *rest[TL_STRUCTURED_MAX_OUTPUTS] = {0};
    for (int i = 1; i < n; i++) {
        if (!s->outputs[i]) {
            tl_structured_cleanup(s);
            return tl_set_error(TL_ERR_RUNTIME, "structured kernel: meta function set no output %d", i);
        }
        rest[i] = s->outputs[i];
        s->outputs[i] = NULL;
    }
    tl_tensor *first = tl_structured_finish(s); /* bumps outputs[0], frees the rest */
    if (!first) {
        for (int i = 1; i < n; i++) tl_tensor_release(rest[i]);
        return -1;
    }
    *rets[0] = first;
    for (int i = 1; i < n; i++) {
        if (s->kind != TL_STRUCTURED_FUNCTIONAL) tl_tensor_bump_version(rest[i]);
        *rets[i] = rest[i];
    }
    return 0;
}
