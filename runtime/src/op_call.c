/* torchlet runtime: boxed calls from flat argument streams (see tl_dispatch.h,
 * tl_op_call_flat). torchlet.ops calls every operator through here: one
 * crossing from Python builds the stack, dispatches and returns. */
#include <stdlib.h>

#include "tl_dispatch.h"
#include "tl_error.h"
#include "tl_internal.h"

/* reads the streams into `st`; 0 / -1 */
static int push_flat(const tl_operator *op, const int32_t *kinds, int32_t nargs, const int64_t *ints,
                     const double *doubles, tl_tensor *const *tensors, const char *const *strings,
                     tl_stack *st) {
    if (nargs != tl_op_num_arguments(op))
        return tl_set_error(TL_ERR_RUNTIME, "%s takes %d arguments, %d given", tl_op_name(op),
                            tl_op_num_arguments(op), nargs);
    int64_t ii = 0, di = 0, ti = 0, si = 0;
    for (int32_t a = 0; a < nargs; a++) {
        int rc;
        int kind = kinds[a];
        if (kind & TL_FLAT_OPTIONAL) { /* a presence int, then the value when present */
            if (!ints[ii++]) {
                if (tl_stack_push_none(st)) return -1;
                continue;
            }
            kind &= ~TL_FLAT_OPTIONAL;
        }
        if (kind == TL_FLAT_SCALAR) { /* a kind int (0 bool, 1 int, 2 double), then the value */
            int64_t k = ints[ii++];
            rc = k == 2 ? tl_stack_push_double(st, doubles[di++])
                        : k == 1 ? tl_stack_push_int(st, ints[ii++]) : tl_stack_push_bool(st, ints[ii++] != 0);
            if (rc) return -1;
            continue;
        }
        switch (kind) {
        case TL_IV_NONE: rc = tl_stack_push_none(st); break;
        case TL_IV_BOOL: rc = tl_stack_push_bool(st, ints[ii++] != 0); break;
        case TL_IV_INT: rc = tl_stack_push_int(st, ints[ii++]); break;
        case TL_IV_DTYPE: rc = tl_stack_push_dtype(st, (int)ints[ii++]); break;
        case TL_IV_DOUBLE: rc = tl_stack_push_double(st, doubles[di++]); break;
        case TL_IV_COMPLEX:
            rc = tl_stack_push_complex(st, doubles[di], doubles[di + 1]);
            di += 2;
            break;
        case TL_IV_TENSOR: rc = tl_stack_push_tensor(st, tensors[ti++]); break;
        case TL_IV_STRING: rc = tl_stack_push_string(st, strings[si++]); break;
        case TL_IV_DEVICE:
            rc = tl_stack_push_device(st, (int)ints[ii], (int)ints[ii + 1]);
            ii += 2;
            break;
        case TL_IV_INT_LIST: {
            int64_t n = ints[ii++];
            rc = tl_stack_push_int_list(st, ints + ii, n);
            ii += n;
            break;
        }
        case TL_IV_BOOL_LIST: {
            int64_t n = ints[ii++];
            uint8_t small[64], *b = n <= 64 ? small : malloc((size_t)n);
            if (!b) return tl_set_error(TL_ERR_MEMORY, "out of memory boxing a bool list");
            for (int64_t k = 0; k < n; k++) b[k] = ints[ii + k] != 0;
            rc = tl_stack_push_bool_list(st, b, n);
            if (b != small) free(b);
            ii += n;
            break;
        }
        case TL_IV_DOUBLE_LIST: {
            int64_t n = ints[ii++];
            rc = tl_stack_push_double_list(st, doubles + di, n);
            di += n;
            break;
        }
        case TL_IV_TENSOR_LIST:
        case TL_IV_OPT_TENSOR_LIST: {
            int64_t n = ints[ii++];
            rc = kind == TL_IV_TENSOR_LIST ? tl_stack_push_tensor_list(st, tensors + ti, n)
                                               : tl_stack_push_opt_tensor_list(st, tensors + ti, n);
            ti += n;
            break;
        }
        default:
            return tl_set_error(TL_ERR_VALUE, "%s: argument %d has an unknown boxed kind %d",
                                tl_op_name(op), a, kinds[a]);
        }
        if (rc) return -1;
    }
    return 0;
}

int tl_op_call_flat(const tl_operator *op, const int32_t *kinds, int32_t nargs, const int64_t *ints,
                    const double *doubles, tl_tensor *const *tensors, const char *const *strings,
                    tl_stack *out) {
    if (!op || !out || (nargs > 0 && !kinds))
        return tl_set_error(TL_ERR_VALUE, "tl_op_call_flat: NULL argument");
    int64_t before = tl_stack_size(out);
    if (push_flat(op, kinds, nargs, ints, doubles, tensors, strings, out) == 0 &&
        tl_op_call_boxed(op, out) == 0)
        return 0;
    tl_stack_drop(out, tl_stack_size(out) - before);
    return -1;
}

int tl_op_redispatch_flat(const tl_operator *op, tl_keyset ks, const int32_t *kinds, int32_t nargs,
                          const int64_t *ints, const double *doubles, tl_tensor *const *tensors,
                          const char *const *strings, tl_stack *out) {
    if (!op || !out || (nargs > 0 && !kinds))
        return tl_set_error(TL_ERR_VALUE, "tl_op_redispatch_flat: NULL argument");
    int64_t before = tl_stack_size(out);
    if (push_flat(op, kinds, nargs, ints, doubles, tensors, strings, out) == 0 &&
        tl_op_redispatch_boxed(op, ks, out) == 0)
        return 0;
    tl_stack_drop(out, tl_stack_size(out) - before);
    return -1;
}

tl_tensor *tl_op_call_flat_tensor(const tl_operator *op, const int32_t *kinds, int32_t nargs,
                                  const int64_t *ints, const double *doubles,
                                  tl_tensor *const *tensors, const char *const *strings) {
    tl_stack st;
    tl_stack_init(&st);
    tl_tensor *t = NULL;
    if (tl_op_call_flat(op, kinds, nargs, ints, doubles, tensors, strings, &st) == 0) {
        tl_ivalue *v = tl_stack_peek(&st, 0);
        if (tl_stack_size(&st) == 1 && v->tag == TL_IV_TENSOR && v->u.t) {
            t = v->u.t;
            v->u.t = NULL;
            v->tag = TL_IV_NONE;
        } else {
            tl_set_error(TL_ERR_RUNTIME, "%s did not return one Tensor", tl_op_name(op));
        }
    }
    tl_stack_free(&st);
    return t;
}
