/* einsum (aten/src/ATen/native/Linear.cpp, CompositeImplicitAutograd): the
 * equation is parsed into labels per operand; every operand is aligned to
 * one shape "output dims + contracted dims" (diagonals for repeated labels,
 * unsqueezes for missing ones, one permute); operands are then contracted
 * pairwise, left to right or along `path`, each pair by sumproduct_pair:
 * permute + reshape to [batch, m, k] x [batch, k, n], one bmm (the BLAS
 * product), view back. Dimensions present in one operand only are summed
 * before the product. Autograd flows through the operators called; the
 * messages are PyTorch's. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/bmm.h"
#include "ops/diagonal.h"
#include "ops/einsum.h"
#include "ops/movedim.h"
#include "ops/mul.h"
#include "ops/permute.h"
#include "ops/reshape.h"
#include "ops/sum.h"
#include "ops/unsqueeze.h"
#include "ops/view.h"
#include "tl_runtime.h"
#include "tl_tensor.h"

#define TOTAL_LABELS 52
#define ELLIPSIS 52

static bool is_subscript(unsigned char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

/* 'A'..'Z' -> 0..25, 'a'..'z' -> 26..51: the implicit output's order */
static int subscript_to_label(unsigned char c) {
    return c <= 'Z' ? c - 'A' : c - 'a' + 26;
}

static char label_to_subscript(int l) {
    return (char)(l < 26 ? 'A' + l : 'a' + l - 26);
}

/* replaces *t by r (NULL kept as the error) */
static int step(tl_tensor **t, tl_tensor *r) {
    tl_tensor_release(*t);
    *t = r;
    return r ? 0 : -1;
}

/* left * right summed over sum_dims (both of one rank, broadcast-aligned),
 * keeping the summed dims as size 1: PyTorch's sumproduct_pair (keepdim) */
static tl_tensor *sumproduct_pair(tl_tensor *left_, tl_tensor *right_, const int64_t *sum_dims, int64_t nsum) {
    const int64_t dim = tl_tensor_ndim(left_);
    if (dim != tl_tensor_ndim(right_)) {
        tl_set_error(TL_ERR_RUNTIME, "number of dimensions must match");
        return NULL;
    }
    if (nsum == 0) return tl_ops_mul_Tensor(left_, right_);
    bool is_sum[TL_MAX_DIMS] = {false};
    for (int64_t k = 0; k < nsum; k++) is_sum[sum_dims[k]] = true;
    int64_t lro[TL_MAX_DIMS], lo[TL_MAX_DIMS], ro[TL_MAX_DIMS], nlro = 0, nlo = 0, nro = 0;
    int64_t lro_size = 1, lo_size = 1, ro_size = 1, sum_size = 1;
    tl_tensor *left = left_, *right = right_, *result = NULL;
    tl_tensor_retain(left);
    tl_tensor_retain(right);
    for (int64_t i = 0; i < dim; i++) {
        const int64_t szl = tl_tensor_size(left, i), szr = tl_tensor_size(right, i);
        const bool sl = szl != 1, sr = szr != 1;
        if (is_sum[i]) {
            if (sl && sr) {
                if (szl != szr) goto mismatch;
                sum_size *= szl;
            } else if (sl) {
                if (step(&left, tl_ops_sum_dim_IntList(left, &i, 1, true, TL_DTYPE_UNDEFINED))) goto done;
            } else if (sr) {
                if (step(&right, tl_ops_sum_dim_IntList(right, &i, 1, true, TL_DTYPE_UNDEFINED))) goto done;
            }
        } else if (sl && sr) {
            if (szl != szr) goto mismatch;
            lro[nlro++] = i;
            lro_size *= szl;
        } else if (sl) {
            lo[nlo++] = i;
            lo_size *= szl;
        } else {
            ro[nro++] = i;
            ro_size *= szr;
        }
    }
    /* output "lro, lo, 1 per summed dim, ro"; left "lro, lo, sum"; right "lro, sum, ro" */
    int64_t out_size[TL_MAX_DIMS], lperm[TL_MAX_DIMS], rperm[TL_MAX_DIMS], operm[TL_MAX_DIMS];
    int64_t n = 0;
    for (int64_t k = 0; k < nlro; k++) out_size[n++] = tl_tensor_size(left, lro[k]);
    for (int64_t k = 0; k < nlo; k++) out_size[n++] = tl_tensor_size(left, lo[k]);
    for (int64_t k = 0; k < nsum; k++) out_size[n++] = 1;
    for (int64_t k = 0; k < nro; k++) out_size[n++] = tl_tensor_size(right, ro[k]);
    int64_t a = 0, b = 0, o = 0;
    for (int64_t k = 0; k < nlro; k++) {
        lperm[a++] = rperm[b++] = lro[k];
        operm[lro[k]] = o++;
    }
    for (int64_t k = 0; k < nlo; k++) {
        lperm[a++] = lo[k];
        operm[lo[k]] = o++;
    }
    for (int64_t k = 0; k < nsum; k++) {
        lperm[a++] = rperm[b++] = sum_dims[k];
        operm[sum_dims[k]] = o++;
    }
    for (int64_t k = 0; k < nro; k++) {
        lperm[a++] = rperm[b++] = ro[k];
        operm[ro[k]] = o++;
    }
    for (int64_t k = 0; k < nlo; k++) rperm[b++] = lo[k];
    const int64_t lshape[3] = {lro_size, lo_size, sum_size}, rshape[3] = {lro_size, sum_size, ro_size};
    if (step(&left, tl_ops_permute(left, lperm, dim)) || step(&left, tl_ops_reshape(left, lshape, 3)) ||
        step(&right, tl_ops_permute(right, rperm, dim)) || step(&right, tl_ops_reshape(right, rshape, 3)))
        goto done;
    result = tl_ops_bmm(left, right);
    if (result && !step(&result, tl_ops_view(result, out_size, n))) step(&result, tl_ops_permute(result, operm, n));
    goto done;
mismatch:
    tl_set_error(TL_ERR_RUNTIME, "non-broadcast dimensions must match");
done:
    tl_tensor_release(left);
    tl_tensor_release(right);
    return result;
}

/* the equation's labels: op_labels[i] (ELLIPSIS for "..."), per operand */
typedef struct {
    uint8_t *labels;
    int64_t *start; /* operand i's labels: labels[start[i] .. start[i+1]) */
} parsed_lhs;

static int parse_lhs(const char *lhs, size_t len, int64_t num_ops, parsed_lhs *p) {
    int64_t curr = 0, n = 0;
    bool ell = false;
    p->start[0] = 0;
    for (size_t i = 0; i < len; i++) {
        const unsigned char c = (unsigned char)lhs[i];
        if (c == ' ') continue;
        if (c == '.') {
            if (ell)
                return tl_set_error(TL_ERR_RUNTIME,
                                    "einsum(): found '.' for operand %lld for which an ellipsis was already found",
                                    (long long)curr);
            if (!(i + 2 < len && lhs[++i] == '.' && lhs[++i] == '.'))
                return tl_set_error(TL_ERR_RUNTIME, "einsum(): found '.' for operand %lld that is not part of any ellipsis",
                                    (long long)curr);
            p->labels[n++] = ELLIPSIS;
            ell = true;
        } else if (c == ',') {
            if (++curr >= num_ops)
                return tl_set_error(TL_ERR_RUNTIME, "einsum(): fewer operands were provided than specified in the equation");
            p->start[curr] = n;
            ell = false;
        } else {
            if (!is_subscript(c))
                return tl_set_error(TL_ERR_RUNTIME,
                                    "einsum(): invalid subscript given at index %zu in the equation string, subscripts must be in [a-zA-Z]",
                                    i);
            p->labels[n++] = (uint8_t)subscript_to_label(c);
        }
    }
    if (curr != num_ops - 1)
        return tl_set_error(TL_ERR_RUNTIME, "einsum(): more operands were provided than specified in the equation");
    p->start[num_ops] = n;
    return 0;
}

tl_tensor *tl_native_einsum(tl_keyset ks, const char *equation, tl_tensor *const *tensors, int64_t num_ops,
                            const int64_t *path, int64_t path_len) {
    (void)ks;
    const bool has_path = path != NULL;
    if (num_ops == 0) {
        tl_set_error(TL_ERR_RUNTIME, "einsum(): must provide at least one operand");
        return NULL;
    }
    const size_t eq_len = strlen(equation);
    const char *arrow = strstr(equation, "->");
    const size_t lhs_len = arrow ? (size_t)(arrow - equation) : eq_len;
    parsed_lhs p = {malloc(lhs_len + 1), malloc((size_t)(num_ops + 1) * sizeof(int64_t))};
    tl_tensor **ops = calloc((size_t)num_ops, sizeof(tl_tensor *));
    tl_tensor *result = NULL;
    int64_t nops = 0;
    if (!p.labels || !p.start || !ops) {
        tl_set_error(TL_ERR_MEMORY, "einsum(): out of memory");
        goto done;
    }
    if (parse_lhs(equation, lhs_len, num_ops, &p)) goto done;

    int64_t label_count[TOTAL_LABELS] = {0}, ell_num_dim = 0;
    for (int64_t i = 0; i < num_ops; i++) {
        const int64_t ndims = tl_tensor_ndim(tensors[i]);
        int64_t nlabels = p.start[i + 1] - p.start[i];
        bool has_ell = false;
        for (int64_t k = p.start[i]; k < p.start[i + 1]; k++) {
            if (p.labels[k] == ELLIPSIS) {
                --nlabels;
                has_ell = true;
            } else {
                ++label_count[p.labels[k]];
            }
        }
        if (has_ell && ndims - nlabels > ell_num_dim) ell_num_dim = ndims - nlabels;
        if (has_ell ? nlabels > ndims : nlabels != ndims) {
            tl_set_error(TL_ERR_RUNTIME,
                         "einsum(): the number of subscripts in the equation (%lld) does not match the number of "
                         "dimensions (%lld) for operand %lld%s",
                         (long long)nlabels, (long long)ndims, (long long)i, has_ell ? "" : " and no ellipsis was given");
            goto done;
        }
    }

    /* every operand is aligned to "output dims + contracted dims" */
    int64_t label_perm_index[TOTAL_LABELS], perm_index = 0, ell_index = 0;
    for (int l = 0; l < TOTAL_LABELS; l++) label_perm_index[l] = -1;
    bool ell_in_output = false;
    if (!arrow) { /* implicit output: the ellipsis, then the labels seen once */
        perm_index = ell_num_dim;
        ell_in_output = true;
        for (int l = 0; l < TOTAL_LABELS; l++)
            if (label_count[l] == 1) label_perm_index[l] = perm_index++;
    } else {
        const char *rhs = arrow + 2;
        const size_t rlen = strlen(rhs);
        for (size_t i = 0; i < rlen; i++) {
            const unsigned char c = (unsigned char)rhs[i];
            if (c == ' ') continue;
            if (c == '.') {
                if (ell_in_output) {
                    tl_set_error(TL_ERR_RUNTIME, "einsum(): found '.' for output but an ellipsis (...) was already found");
                    goto done;
                }
                if (!(i + 2 < rlen && rhs[++i] == '.' && rhs[++i] == '.')) {
                    tl_set_error(TL_ERR_RUNTIME, "einsum(): found '.' for output that is not part of any ellipsis (...)");
                    goto done;
                }
                ell_index = perm_index;
                perm_index += ell_num_dim;
                ell_in_output = true;
            } else {
                if (!is_subscript(c)) {
                    tl_set_error(TL_ERR_RUNTIME,
                                 "einsum(): invalid subscript given at index %zu in the equation string, subscripts "
                                 "must be in [a-zA-Z]",
                                 lhs_len + 2 + i);
                    goto done;
                }
                const int l = subscript_to_label(c);
                if (!(label_count[l] > 0 && label_perm_index[l] == -1)) {
                    tl_set_error(TL_ERR_RUNTIME, "einsum(): output subscript %c%s", c,
                                 label_perm_index[l] > -1 ? " appears more than once in the output"
                                                          : " does not appear in the equation for any input operand");
                    goto done;
                }
                label_perm_index[l] = perm_index++;
            }
        }
    }
    const int64_t out_num_dim = perm_index;
    if (!ell_in_output) {
        ell_index = perm_index;
        perm_index += ell_num_dim;
    }
    for (int l = 0; l < TOTAL_LABELS; l++)
        if (label_count[l] > 0 && label_perm_index[l] == -1) label_perm_index[l] = perm_index++;
    if (perm_index > TL_MAX_DIMS) {
        tl_set_error(TL_ERR_RUNTIME, "einsum(): the equation spans %lld dimensions, more than %d",
                     (long long)perm_index, TL_MAX_DIMS);
        goto done;
    }

    /* sizes checked, diagonals for repeated labels, missing dims unsqueezed,
     * one permute; dim_counts: operands with a non-1 size per aligned dim */
    int64_t label_size[TOTAL_LABELS], ell_sizes[TL_MAX_DIMS], dim_counts[TL_MAX_DIMS] = {0};
    for (int l = 0; l < TOTAL_LABELS; l++) label_size[l] = 1;
    for (int64_t j = 0; j < ell_num_dim; j++) ell_sizes[j] = 1;
    for (int64_t i = 0; i < num_ops; i++) {
        tl_tensor *op = tensors[i];
        tl_tensor_retain(op);
        int64_t permutation[TL_MAX_DIMS], dim = 0;
        for (int64_t k = 0; k < perm_index; k++) permutation[k] = -1;
        const int64_t nl = p.start[i + 1] - p.start[i];
        for (int64_t k = p.start[i]; k < p.start[i + 1]; k++) {
            const int s = p.labels[k];
            if (s == ELLIPSIS) {
                const int64_t ndim = tl_tensor_ndim(tensors[i]) - (nl - 1);
                for (int64_t j = ell_num_dim - ndim; j < ell_num_dim; j++) {
                    const int64_t sz = tl_tensor_size(op, dim);
                    if (sz != 1) {
                        if (ell_sizes[j] != 1 && ell_sizes[j] != sz) {
                            tl_set_error(TL_ERR_RUNTIME,
                                         "einsum(): dimension %lld covered by ellipsis in operand %lldhas size %lld "
                                         "which does not broadcast with previously seen ellipsis with size %lld for "
                                         "dimensions covered by ellipsis",
                                         (long long)dim, (long long)i, (long long)sz, (long long)ell_sizes[j]);
                            tl_tensor_release(op);
                            goto done;
                        }
                        ell_sizes[j] = sz;
                        ++dim_counts[ell_index + j];
                    }
                    permutation[ell_index + j] = dim++;
                }
            } else if (permutation[label_perm_index[s]] == -1) {
                const int64_t sz = tl_tensor_size(op, dim);
                if (sz != 1) {
                    if (label_size[s] != 1 && label_size[s] != sz) {
                        tl_set_error(TL_ERR_RUNTIME,
                                     "einsum(): subscript %c has size %lld for operand %lld which does not broadcast "
                                     "with previously seen size %lld",
                                     label_to_subscript(s), (long long)sz, (long long)i, (long long)label_size[s]);
                        tl_tensor_release(op);
                        goto done;
                    }
                    label_size[s] = sz;
                    ++dim_counts[label_perm_index[s]];
                }
                permutation[label_perm_index[s]] = dim++;
            } else { /* repeated label: its diagonal, moved to the first occurrence */
                const int64_t prev = permutation[label_perm_index[s]];
                const int64_t sz = tl_tensor_size(op, dim), szp = tl_tensor_size(op, prev);
                if (sz != szp) {
                    tl_set_error(TL_ERR_RUNTIME,
                                 "einsum(): subscript %c is repeated for operand %lld but the sizes don't match, %lld != %lld",
                                 label_to_subscript(s), (long long)i, (long long)sz, (long long)szp);
                    tl_tensor_release(op);
                    goto done;
                }
                if (step(&op, tl_ops_diagonal(op, 0, prev, dim)) || step(&op, tl_ops_movedim_int(op, -1, prev))) goto done;
            }
        }
        for (int64_t k = 0; k < perm_index; k++)
            if (permutation[k] == -1) {
                if (step(&op, tl_ops_unsqueeze(op, dim))) goto done;
                permutation[k] = dim++;
            }
        if (step(&op, tl_ops_permute(op, permutation, perm_index))) goto done;
        ops[nops++] = op;
    }

    /* contraction, pairwise: the first two (result in front) or path's pairs (result at the back) */
    int64_t pi = 0;
    while (nops > 1) {
        int64_t i = 0, j = 1;
        if (has_path) {
            if (pi + 1 >= path_len) {
                tl_set_error(TL_ERR_RUNTIME, "einsum(): invalid contraction path of length %lld for %lld operands",
                             (long long)path_len, (long long)num_ops);
                goto done;
            }
            i = path[pi++];
            j = path[pi++];
            if (j < i) {
                const int64_t t = i;
                i = j;
                j = t;
            }
            if (!(i != j && i >= 0 && j < nops)) {
                tl_set_error(TL_ERR_RUNTIME, "einsum(): invalid contraction (%lld, %lld) for contraction path with %lld operands",
                             (long long)i, (long long)j, (long long)nops);
                goto done;
            }
        }
        tl_tensor *a = ops[i], *b = ops[j];
        memmove(ops + j, ops + j + 1, (size_t)(nops - j - 1) * sizeof *ops);
        memmove(ops + i, ops + i + 1, (size_t)(nops - i - 2) * sizeof *ops);
        nops -= 2;
        int64_t sum_dims[TL_MAX_DIMS], a_sum[TL_MAX_DIMS], b_sum[TL_MAX_DIMS], ns = 0, na = 0, nb = 0;
        for (int64_t d = out_num_dim; d < perm_index; d++) {
            const bool sa = tl_tensor_size(a, d) != 1, sb = tl_tensor_size(b, d) != 1;
            if (sa && sb) {
                if (--dim_counts[d] == 1) {
                    sum_dims[ns++] = d;
                    dim_counts[d] = 0;
                }
            } else if (dim_counts[d] == 1) {
                if (sa) {
                    a_sum[na++] = d;
                    dim_counts[d] = 0;
                } else if (sb) {
                    b_sum[nb++] = d;
                    dim_counts[d] = 0;
                }
            }
        }
        tl_tensor *r = NULL;
        if ((na == 0 || !step(&a, tl_ops_sum_dim_IntList(a, a_sum, na, true, TL_DTYPE_UNDEFINED))) &&
            (nb == 0 || !step(&b, tl_ops_sum_dim_IntList(b, b_sum, nb, true, TL_DTYPE_UNDEFINED))))
            r = sumproduct_pair(a, b, sum_dims, ns);
        tl_tensor_release(a);
        tl_tensor_release(b);
        if (!r) goto done;
        if (has_path) {
            ops[nops++] = r;
        } else {
            memmove(ops + 1, ops, (size_t)nops * sizeof *ops);
            ops[0] = r;
            nops++;
        }
    }

    if (perm_index - out_num_dim > 0) {
        if (num_ops > 1) { /* the contracted dims are all 1 now: a view drops them */
            result = tl_ops_view(ops[0], tl_tensor_sizes(ops[0]), out_num_dim);
        } else {
            int64_t sum_dims[TL_MAX_DIMS];
            for (int64_t d = out_num_dim; d < perm_index; d++) sum_dims[d - out_num_dim] = d;
            result = tl_ops_sum_dim_IntList(ops[0], sum_dims, perm_index - out_num_dim, false, TL_DTYPE_UNDEFINED);
        }
    } else {
        tl_tensor_retain(result = ops[0]);
    }
done:
    for (int64_t k = 0; k < nops; k++) tl_tensor_release(ops[k]);
    free(ops);
    free(p.labels);
    free(p.start);
    return result;
}
