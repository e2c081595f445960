/* Backward helpers of the decompositions (declared in
 * autograd/tl_autograd_formulas.h): PyTorch's FunctionsManual.cpp
 * lu_factor_ex_backward, linalg_lu_backward, linalg_lu_solve_LU,
 * lu_unpack_backward, linalg_qr_backward, householder_product_backward,
 * ormqr_backward, triangular_solve_backward, linalg_lstsq_backward,
 * pinv_backward and linalg_matrix_exp_differential for real inputs (mH is
 * the transpose), written over entry points (tl_ops_*) so that they are
 * recorded under create_graph.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ag_temps.h"
#include "tl_autograd_formulas.h"
#include "tl_error.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/add.h"
#include "ops/cat.h"
#include "ops/constant_pad_nd.h"
#include "ops/eye.h"
#include "ops/linalg_householder_product.h"
#include "ops/linalg_matrix_exp.h"
#include "ops/linalg_pinv.h"
#include "ops/linalg_solve_triangular.h"
#include "ops/lu_unpack.h"
#include "ops/matmul.h"
#include "ops/mul.h"
#include "ops/narrow.h"
#include "ops/neg.h"
#include "ops/ones_like.h"
#include "ops/ormqr.h"
#include "ops/squeeze.h"
#include "ops/stack.h"
#include "ops/sub.h"
#include "ops/sum.h"
#include "ops/triangular_solve.h"
#include "ops/tril.h"
#include "ops/triu.h"
#include "ops/unsqueeze.h"
#include "ops/zeros_like.h"
#include "tl_tensor.h"

static tl_tensor *mm(temps *t, tl_tensor *a, tl_tensor *b) { return a && b ? hold(t, tl_ops_matmul(a, b)) : NULL; }
static tl_tensor *add(temps *t, tl_tensor *a, tl_tensor *b) {
    return a && b ? hold(t, tl_ops_add_Tensor(a, b, tl_scalar_from_int(1))) : NULL;
}
static tl_tensor *sub(temps *t, tl_tensor *a, tl_tensor *b) {
    return a && b ? hold(t, tl_ops_sub_Tensor(a, b, tl_scalar_from_int(1))) : NULL;
}
static tl_tensor *neg(temps *t, tl_tensor *a) { return a ? hold(t, tl_ops_neg(a)) : NULL; }
static tl_tensor *scale(temps *t, tl_tensor *a, double s) {
    return a ? hold(t, tl_ops_mul_Scalar(a, tl_scalar_from_double(s))) : NULL;
}
static tl_tensor *tril(temps *t, tl_tensor *a, int64_t d) { return a ? hold(t, tl_ops_tril(a, d)) : NULL; }
static tl_tensor *triu(temps *t, tl_tensor *a, int64_t d) { return a ? hold(t, tl_ops_triu(a, d)) : NULL; }
static tl_tensor *narrow(temps *t, tl_tensor *a, int64_t dim, int64_t start, int64_t len) {
    return a ? hold(t, tl_ops_narrow(a, dim, start, len)) : NULL;
}
static tl_tensor *zeros_like(temps *t, tl_tensor *a) {
    return a ? hold(t, tl_ops_zeros_like(a, TL_DTYPE_UNDEFINED, -1, -1, false, false, -1)) : NULL;
}
static tl_tensor *cat2(temps *t, tl_tensor *a, tl_tensor *b, int64_t dim) {
    if (!a || !b) return NULL;
    tl_tensor *l[2] = {a, b};
    return hold(t, tl_ops_cat(l, 2, dim));
}
/* X with op(A) X = B (left) or X op(A) = B, A triangular */
static tl_tensor *trisolve(temps *t, tl_tensor *A, tl_tensor *B, bool upper, bool left, bool unit) {
    return A && B ? hold(t, tl_ops_linalg_solve_triangular(A, B, upper, left, unit)) : NULL;
}
/* x with `rows` zero rows below and `cols` zero columns right */
static tl_tensor *pad(temps *t, tl_tensor *x, int64_t rows, int64_t cols) {
    const int64_t p[4] = {0, cols, 0, rows};
    return x ? hold(t, tl_ops_constant_pad_nd(x, p, 4, tl_scalar_from_int(0))) : NULL;
}
static int64_t size(tl_tensor *x, int64_t d) { return tl_tensor_size(x, d); }

/* ------------------------------------------------------------ LU */

/* PyTorch's linalg_lu_backward: A = P L U, L [..., m, k] unit lower, U [..., k, n] */
tl_tensor *tl_ag_linalg_lu_backward(tl_tensor *gL, tl_tensor *gU, tl_tensor *P, tl_tensor *L, tl_tensor *U,
                                    bool pivot) {
    if (!gL && !gU) return NULL;
    temps t = {.count = 0};
    const int64_t m = size(L, -2), n = size(U, -1), k = m < n ? m : n;
    tl_tensor *gA = NULL;
    if (m == n) {   /* P L^-T [(L^T gL) o 1_L + (gU U^T) o 1_U] U^-T */
        gA = gL ? tril(&t, mm(&t, tr(&t, L), gL), -1) : NULL;
        if (gU) {
            tl_tensor *u = triu(&t, mm(&t, gU, tr(&t, U)), 0);
            gA = gA ? add(&t, gA, u) : u;
        }
        gA = trisolve(&t, tr(&t, U), gA, false, false, false);
        gA = trisolve(&t, tr(&t, L), gA, true, true, true);
    } else if (m < n) {   /* wide: U = [U1 | U2] */
        tl_tensor *U1 = narrow(&t, U, -1, 0, k);
        gA = gL ? mm(&t, tr(&t, L), gL) : NULL;
        if (gU) {
            tl_tensor *u = mm(&t, triu(&t, gU, 0), tr(&t, U));
            gA = gA ? sub(&t, gA, u) : neg(&t, u);
        }
        gA = trisolve(&t, tr(&t, U1), tril(&t, gA, -1), false, false, false);
        if (gU) gA = cat2(&t, add(&t, gA, triu(&t, narrow(&t, gU, -1, 0, k), 0)), narrow(&t, gU, -1, k, n - k), -1);
        gA = trisolve(&t, tr(&t, L), gA, true, true, true);
        if (!gU) gA = cat2(&t, gA, zeros_like(&t, narrow(&t, U, -1, k, n - k)), -1);
    } else {   /* tall: L = [L1; L2] */
        tl_tensor *L1 = narrow(&t, L, -2, 0, k);
        gA = gU ? mm(&t, gU, tr(&t, U)) : NULL;
        if (gL) {
            tl_tensor *l = mm(&t, tr(&t, L), tril(&t, gL, -1));
            gA = gA ? sub(&t, gA, l) : neg(&t, l);
        }
        gA = trisolve(&t, tr(&t, L1), triu(&t, gA, 0), true, true, true);
        if (gL) gA = cat2(&t, add(&t, gA, tril(&t, narrow(&t, gL, -2, 0, k), -1)), narrow(&t, gL, -2, k, m - k), -2);
        gA = trisolve(&t, tr(&t, U), gA, false, false, false);
        if (!gL) gA = cat2(&t, gA, zeros_like(&t, narrow(&t, L, -2, k, m - k)), -2);
    }
    if (gA && pivot) gA = mm(&t, P, gA);
    return finish(&t, gA);
}

/* PyTorch's lu_factor_ex_backward: LU's gradient split into L's and U's */
tl_tensor *tl_ag_lu_factor_ex_backward(tl_tensor *grad, tl_tensor *LU, tl_tensor *pivots, bool pivot) {
    if (!grad) return NULL;
    temps t = {.count = 0};
    tl_tensor *P = NULL, *L = NULL, *U = NULL;
    if (tl_ops_lu_unpack(LU, pivots, true, pivot, &P, &L, &U)) return NULL;
    hold(&t, P), hold(&t, L), hold(&t, U);
    const int64_t m = size(LU, -2), n = size(LU, -1), k = m < n ? m : n;
    tl_tensor *gL = narrow(&t, grad, -1, 0, k), *gU = narrow(&t, grad, -2, 0, k);
    if (!gL || !gU) return finish(&t, NULL);
    return finish(&t, hold(&t, tl_ag_linalg_lu_backward(gL, gU, P, L, U, pivot)));
}

/* PyTorch's linalg_lu_solve_LU: the gradient of LU for X = op(A)^-1 B (left)
 * or B op(A)^-1, A = P L U */
tl_tensor *tl_ag_linalg_lu_solve_LU(tl_tensor *gX, tl_tensor *LU, tl_tensor *pivots, tl_tensor *X, bool left,
                                    bool adjoint) {
    if (!gX) return NULL;
    temps t = {.count = 0};
    tl_tensor *P = NULL, *L = NULL, *U = NULL;
    if (tl_ops_lu_unpack(LU, pivots, true, left == adjoint, &P, &L, &U)) return NULL;
    hold(&t, P), hold(&t, L), hold(&t, U);
    if (left != adjoint) {
        /* gR = U^-T (-op(gX) op(X)^T); gL = (L^-T gR U^T).tril(-1); gU = gR.triu() */
        tl_tensor *g = left ? mm(&t, gX, tr(&t, X)) : mm(&t, tr(&t, gX), X);
        tl_tensor *gR = trisolve(&t, tr(&t, U), neg(&t, g), false, true, false);
        tl_tensor *gLl = tril(&t, trisolve(&t, tr(&t, L), mm(&t, gR, tr(&t, U)), true, true, true), -1);
        return finish(&t, add(&t, gLl, triu(&t, gR, 0)));
    }
    /* gR = -P^T op(X) op(gX)^T P L^-T; gL = gR.tril(-1); gU = (L^T gR U^-T).triu() */
    tl_tensor *xg = left ? mm(&t, X, tr(&t, gX)) : mm(&t, tr(&t, X), gX);
    tl_tensor *gR = neg(&t, mm(&t, mm(&t, tr(&t, P), xg), P));
    gR = trisolve(&t, tr(&t, L), gR, true, false, true);
    tl_tensor *gU = triu(&t, trisolve(&t, tr(&t, U), mm(&t, tr(&t, L), gR), false, false, false), 0);
    return finish(&t, add(&t, tril(&t, gR, -1), gU));
}

/* PyTorch's lu_unpack_backward: L's strict lower and U's upper gradients
 * placed back into the m x n LU */
tl_tensor *tl_ag_lu_unpack_backward(tl_tensor *gL, tl_tensor *gU, int64_t m, int64_t n) {
    if (!gL && !gU) return NULL;
    temps t = {.count = 0};
    const int64_t k = m < n ? m : n;
    tl_tensor *l = gL ? tril(&t, gL, -1) : NULL, *u = gU ? triu(&t, gU, 0) : NULL;
    if (m == n) return finish(&t, l && u ? add(&t, l, u) : (l ? l : u));
    if (m < n) {   /* U is m x n; L (m x m) goes into the first k columns */
        if (!u) return finish(&t, pad(&t, l, 0, n - k));
        if (l) u = cat2(&t, add(&t, narrow(&t, u, -1, 0, k), l), narrow(&t, u, -1, k, n - k), -1);
        return finish(&t, u);
    }
    /* L is m x n; U (n x n) goes into the first k rows */
    if (!l) return finish(&t, pad(&t, u, m - k, 0));
    if (u) l = cat2(&t, add(&t, narrow(&t, l, -2, 0, k), u), narrow(&t, l, -2, k, m - k), -2);
    return finish(&t, l);
}

/* ------------------------------------------------------------ QR */

/* copyltu(M) = tril(M) + tril(M, -1)^T: the symmetric matrix with M's lower triangle */
static tl_tensor *copyltu(temps *t, tl_tensor *M) { return add(t, tril(t, M, 0), tr(t, tril(t, M, -1))); }

/* square / tall reduced case: gA = (gQ + Q copyltu(M)) R^-T, M = R gR^T - gQ^T Q */
static tl_tensor *qr_tall(temps *t, tl_tensor *gQ, tl_tensor *gR, tl_tensor *Q, tl_tensor *R) {
    tl_tensor *M = mm(t, R, tr(t, gR));
    M = sub(t, M, mm(t, tr(t, gQ), Q));
    tl_tensor *B = add(t, gQ, mm(t, Q, copyltu(t, M)));
    return trisolve(t, tr(t, R), B, false, false, false);
}

tl_tensor *tl_ag_linalg_qr_backward(tl_tensor *gQ, tl_tensor *gR, tl_tensor *Q, tl_tensor *R, const char *mode) {
    if (strcmp(mode, "r") == 0) {
        tl_set_error(TL_ERR_RUNTIME, "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                                     "Please use linalg.qr(A, mode='reduced') if you are going to differentiate "
                                     "through linalg.qr.");
        return NULL;
    }
    const int64_t m = size(Q, -2), n = size(R, -1);
    if (strcmp(mode, "complete") == 0 && m > n) {
        tl_set_error(TL_ERR_RUNTIME, "The QR decomposition is not differentiable when mode='complete' and nrows > "
                                     "ncols.");
        return NULL;
    }
    if (!gQ && !gR) return NULL;
    temps t = {.count = 0};
    tl_tensor *gq = gQ ? gQ : zeros_like(&t, Q), *gr = gR ? gR : zeros_like(&t, R);
    if (m >= n) return finish(&t, qr_tall(&t, gq, gr, Q, R));
    /* wide: A = [X | Y], R = [U | V], X = Q U, Y = Q V: V's gradient reaches Q through Y gV^T */
    tl_tensor *U = narrow(&t, R, -1, 0, m), *gU = narrow(&t, gr, -1, 0, m), *gV = narrow(&t, gr, -1, m, n - m);
    tl_tensor *Y = hold(&t, tl_ops_narrow(mm(&t, Q, R), -1, m, n - m));
    tl_tensor *gX = qr_tall(&t, add(&t, gq, mm(&t, Y, tr(&t, gV))), gU, Q, U);
    return finish(&t, cat2(&t, gX, mm(&t, Q, gV), -1));
}

/* PyTorch's householder_product_backward. Q = H_1 ... H_k E (E: the first n
 * columns of I_m), H_i = I - tau_i v_i v_i^T. With R_i = H_i ... H_k E and
 * A_i = H_{i-1}^T ... H_1^T gQ, the gradient of H_i is A_i R_{i+1}^T, so
 *   g tau_i = -(A_i^T v_i) . (R_{i+1}^T v_i),
 *   g v_i   = -tau_i (A_i R_{i+1}^T v_i + R_{i+1} A_i^T v_i),
 * the input's column i taking g v_i below the diagonal. */
int tl_ag_householder_product_backward(tl_tensor *grad, tl_tensor *result, tl_tensor *input, tl_tensor *tau,
                                       tl_tensor **grad_input, tl_tensor **grad_tau) {
    (void)result;
    *grad_input = *grad_tau = NULL;
    if (!grad) return 0;
    const int64_t m = size(input, -2), n = size(input, -1), k = size(tau, -1);
    const tl_dtype dt = tl_tensor_dtype(input);
    if (k == 0) {   /* no reflectors: Q = E does not depend on the inputs */
        *grad_input = tl_ops_zeros_like(input, TL_DTYPE_UNDEFINED, -1, -1, false, false, -1);
        *grad_tau = *grad_input ? tl_ops_zeros_like(tau, TL_DTYPE_UNDEFINED, -1, -1, false, false, -1) : NULL;
        if (!*grad_tau) {
            tl_tensor_release(*grad_input);
            *grad_input = NULL;
            return -1;
        }
        return 0;
    }
    /* every tensor of the computation lives in `all` until the end (k is small) */
    temps all = {.count = 0};
    temps *t = &all;
    tl_tensor **R = (tl_tensor **)calloc((size_t)(k + 1), sizeof(tl_tensor *));
    tl_tensor **gv = (tl_tensor **)calloc((size_t)(k + 1), sizeof(tl_tensor *));
    tl_tensor **gt = (tl_tensor **)calloc((size_t)(k + 1), sizeof(tl_tensor *));
    int rc = (!R || !gv || !gt) ? tl_set_error(TL_ERR_MEMORY, "householder_product_backward: out of memory") : 0;
    tl_tensor *eye = rc ? NULL : hold(t, tl_ops_eye_m(m, n, dt, -1, -1, false, false));
    tl_tensor *V = add(t, tril(t, input, -1), eye);   /* reflectors as columns, unit diagonal [..., m, n] */
    tl_tensor *below = tril(t, hold(t, tl_ops_ones_like(input, TL_DTYPE_UNDEFINED, -1, -1, false, false, -1)), -1);
    if (!V || !below) rc = -1;
    /* owned references (released at the end), outside `all` whose capacity is fixed */
    if (rc == 0) R[k] = eye, tl_tensor_retain(eye);
    for (int64_t i = k - 1; rc == 0 && i >= 0; i--) {   /* R_i = R_{i+1} - tau_i v_i (v_i^T R_{i+1}) */
        temps s = {.count = 0};
        tl_tensor *v = narrow(&s, V, -1, i, 1);
        tl_tensor *ti = hold(&s, tl_ops_unsqueeze(narrow(&s, tau, -1, i, 1), -1));
        tl_tensor *upd = mm(&s, v, mm(&s, tr(&s, v), R[i + 1]));
        tl_tensor *sc = upd && ti ? hold(&s, tl_ops_mul_Tensor(upd, ti)) : NULL;
        R[i] = sub(&s, R[i + 1], sc);
        if (R[i]) tl_tensor_retain(R[i]); else rc = -1;
        finish(&s, NULL);
    }
    tl_tensor *Ai = grad;
    tl_tensor_retain(Ai);
    for (int64_t i = 0; rc == 0 && i < k; i++) {
        temps s = {.count = 0};
        tl_tensor *v = narrow(&s, V, -1, i, 1);
        tl_tensor *ti = hold(&s, tl_ops_unsqueeze(narrow(&s, tau, -1, i, 1), -1));   /* [..., 1, 1] */
        tl_tensor *w = mm(&s, tr(&s, R[i + 1]), v);                                  /* R^T v [..., n, 1] */
        tl_tensor *u = mm(&s, tr(&s, Ai), v);                                        /* A^T v [..., n, 1] */
        tl_tensor *uw = u && w ? hold(&s, tl_ops_mul_Tensor(u, w)) : NULL;
        const int64_t d2[2] = {-2, -1};
        tl_tensor *sm = uw ? hold(&s, tl_ops_sum_dim_IntList(uw, d2, 2, false, TL_DTYPE_UNDEFINED)) : NULL;
        gt[i] = sm ? tl_ops_neg(sm) : NULL;
        tl_tensor *dv = add(&s, mm(&s, Ai, w), mm(&s, R[i + 1], u));
        tl_tensor *dvt = dv && ti ? hold(&s, tl_ops_mul_Tensor(dv, ti)) : NULL;
        tl_tensor *dvn = neg(&s, dvt), *low = narrow(&s, below, -1, i, 1);
        gv[i] = dvn && low ? tl_ops_mul_Tensor(dvn, low) : NULL;   /* only entries below the diagonal are free */
        tl_tensor *vu = mm(&s, v, tr(&s, u));
        tl_tensor *upd = vu && ti ? hold(&s, tl_ops_mul_Tensor(vu, ti)) : NULL;
        tl_tensor *An = upd ? tl_ops_sub_Tensor(Ai, upd, tl_scalar_from_int(1)) : NULL;   /* A_{i+1} = H_i^T A_i */
        if (!gt[i] || !gv[i] || !An) rc = -1;
        tl_tensor_release(Ai);
        Ai = An;
        finish(&s, NULL);
    }
    tl_tensor_release(Ai);
    tl_tensor *gi = NULL, *gtau = NULL;
    if (rc == 0) {
        if (k < n) gv[k] = tl_ops_narrow(hold(t, tl_ops_zeros_like(input, TL_DTYPE_UNDEFINED, -1, -1, false, false, -1)),
                                         -1, k, n - k);   /* columns past the reflectors: no gradient */
        gi = (k < n && !gv[k]) ? NULL : tl_ops_cat(gv, k < n ? k + 1 : k, -1);
        gtau = k > 0 ? tl_ops_stack(gt, k, -1) : tl_ops_zeros_like(tau, TL_DTYPE_UNDEFINED, -1, -1, false, false, -1);
        if (!gi || !gtau) rc = -1;
    }
    finish(t, NULL);
    for (int64_t i = 0; R && i <= k; i++) tl_tensor_release(R[i]);
    for (int64_t i = 0; gv && gt && i <= k; i++) tl_tensor_release(gv[i]), tl_tensor_release(gt[i]);
    free(R), free(gv), free(gt);
    if (rc) {
        tl_tensor_release(gi), tl_tensor_release(gtau);
        return -1;
    }
    *grad_input = gi, *grad_tau = gtau;
    return 0;
}

/* PyTorch's ormqr_backward through the full Q = householder_product of the
 * input padded to m x m: result = op(Q) C (left) or C op(Q) */
int tl_ag_ormqr_backward(tl_tensor *grad, tl_tensor *result, tl_tensor *self, tl_tensor *input2, tl_tensor *input3,
                         bool left, bool transpose, const bool *grad_input_mask, int64_t n, tl_tensor **grad_self,
                         tl_tensor **grad_input2, tl_tensor **grad_input3) {
    (void)result;
    *grad_self = *grad_input2 = *grad_input3 = NULL;
    if (!grad) return 0;
    const bool want_a = n > 0 && grad_input_mask[0], want_tau = n > 1 && grad_input_mask[1];
    const bool want_c = n > 2 && grad_input_mask[2];
    temps t = {.count = 0};
    const int64_t mq = size(self, -2), nc = size(self, -1);
    tl_tensor *gC = NULL, *gA = NULL, *gTau = NULL;
    if (want_c) {   /* op(Q)^T g (left) / g op(Q)^T */
        gC = hold(&t, tl_ops_ormqr(self, input2, grad, left, !transpose));
        if (!gC) return finish(&t, NULL), -1;
    }
    if (want_a || want_tau) {
        /* the reflectors in an mq x mq matrix (k <= min(mq, nc): columns past mq hold none) */
        tl_tensor *Ap = nc >= mq ? narrow(&t, self, -1, 0, mq) : pad(&t, self, 0, mq - nc);
        tl_tensor *Q = Ap ? hold(&t, tl_ops_linalg_householder_product(Ap, input2)) : NULL;
        tl_tensor *C = input3, *g = grad, *gQ;
        if (left) gQ = transpose ? mm(&t, C, tr(&t, g)) : mm(&t, g, tr(&t, C));
        else gQ = transpose ? mm(&t, tr(&t, g), C) : mm(&t, tr(&t, C), g);
        tl_tensor *ga = NULL, *gt = NULL;
        if (!Q || !gQ || tl_ag_householder_product_backward(gQ, Q, Ap, input2, &ga, &gt)) return finish(&t, NULL), -1;
        hold(&t, ga), hold(&t, gt);
        gA = nc >= mq ? pad(&t, ga, 0, nc - mq) : narrow(&t, ga, -1, 0, nc), gTau = gt;
        if (!gA) return finish(&t, NULL), -1;
    }
    if (want_a) tl_tensor_retain(gA);
    if (want_tau) tl_tensor_retain(gTau);
    if (want_c) tl_tensor_retain(gC);
    finish(&t, NULL);
    *grad_self = want_a ? gA : NULL, *grad_input2 = want_tau ? gTau : NULL, *grad_input3 = want_c ? gC : NULL;
    return 0;
}

/* ------------------------------------------------------------ triangular_solve, lstsq, pinv */

/* PyTorch's triangular_solve_backward: gB = op(A)^-T g, gA = -gB X^T (op =
 * transpose: -X gB^T) on A's triangle, plus the cloned coefficient's gradient */
int tl_ag_triangular_solve_backward(tl_tensor *grad_x, tl_tensor *grad_m, tl_tensor *b, tl_tensor *a, tl_tensor *x,
                                    bool upper, bool transpose, bool unitriangular, const bool *grad_input_mask,
                                    int64_t n, tl_tensor **grad_b, tl_tensor **grad_a) {
    (void)b;
    *grad_b = *grad_a = NULL;
    if (!grad_x && !grad_m) return 0;
    const bool want_a = n > 1 && grad_input_mask[1];
    temps t = {.count = 0};
    tl_tensor *gb = NULL, *ga = NULL;
    if (grad_x) {
        tl_tensor *sol = NULL, *cl = NULL;
        if (tl_ops_triangular_solve(grad_x, a, upper, !transpose, unitriangular, &sol, &cl)) return finish(&t, NULL), -1;
        hold(&t, sol), hold(&t, cl);
        gb = sol;
        if (want_a) {
            ga = transpose ? neg(&t, mm(&t, x, tr(&t, gb))) : neg(&t, mm(&t, gb, tr(&t, x)));
            ga = upper ? triu(&t, ga, unitriangular ? 1 : 0) : tril(&t, ga, unitriangular ? -1 : 0);
            if (!ga) return finish(&t, NULL), -1;
        }
    }
    if (want_a && grad_m) ga = ga ? add(&t, ga, grad_m) : grad_m;
    if (want_a && !ga) ga = zeros_like(&t, a);
    if (!gb) gb = zeros_like(&t, b);
    if (!gb || (want_a && !ga)) return finish(&t, NULL), -1;
    tl_tensor_retain(gb);
    if (want_a) tl_tensor_retain(ga);
    finish(&t, NULL);
    *grad_b = gb, *grad_a = want_a ? ga : NULL;
    return 0;
}

/* PyTorch's pinv_backward (the products ordered by the smaller dimension) */
tl_tensor *tl_ag_pinv_backward(tl_tensor *grad, tl_tensor *pinvA, tl_tensor *A) {
    if (!grad) return NULL;
    temps t = {.count = 0};
    const int64_t m = size(A, -2), n = size(A, -1);
    tl_tensor *pinvAh = tr(&t, pinvA), *gradh = tr(&t, grad);
    if (m <= n) {
        tl_tensor *K = mm(&t, gradh, pinvA), *KpinvAh = mm(&t, K, pinvAh);
        tl_tensor *r = neg(&t, tr(&t, mm(&t, pinvA, K)));
        r = add(&t, r, KpinvAh);
        r = sub(&t, r, mm(&t, mm(&t, A, pinvA), KpinvAh));
        r = add(&t, r, mm(&t, mm(&t, pinvAh, pinvA), sub(&t, gradh, mm(&t, K, A))));
        return finish(&t, r);
    }
    tl_tensor *K = mm(&t, pinvA, gradh), *pinvAhK = mm(&t, pinvAh, K);
    tl_tensor *r = neg(&t, tr(&t, mm(&t, K, pinvA)));
    r = add(&t, r, mm(&t, mm(&t, sub(&t, gradh, mm(&t, A, K)), pinvA), pinvAh));
    r = add(&t, r, pinvAhK);
    r = sub(&t, r, mm(&t, mm(&t, pinvAhK, pinvA), A));
    return finish(&t, r);
}

/* PyTorch's linalg_lstsq_backward: X = pinv(A) B, so gA = pinv_backward(gX B^T)
 * and gB = pinv(A)^T gX; the residuals |AX - B|^2 (full rank, m > n) add
 * 2 r gL X^T to gA and -2 r gL to gB */
int tl_ag_linalg_lstsq_backward(tl_tensor *gX, tl_tensor *gL, tl_tensor *A, tl_tensor *B, tl_tensor *X,
                                const bool *grad_input_mask, int64_t n, tl_tensor **grad_A, tl_tensor **grad_B) {
    *grad_A = *grad_B = NULL;
    if (!gX && !gL) return 0;
    const bool want_a = n > 0 && grad_input_mask[0], want_b = n > 1 && grad_input_mask[1];
    temps t = {.count = 0};
    const bool vec = tl_tensor_ndim(A) - 1 == tl_tensor_ndim(B) || tl_tensor_ndim(B) == 1;
    tl_tensor *Bm = vec ? hold(&t, tl_ops_unsqueeze(B, -1)) : B;
    tl_tensor *Xm = vec ? hold(&t, tl_ops_unsqueeze(X, -1)) : X;
    tl_tensor *g = gX ? (vec ? hold(&t, tl_ops_unsqueeze(gX, -1)) : gX) : zeros_like(&t, Xm);
    tl_tensor *pinvA = hold(&t, tl_ops_linalg_pinv_atol_rtol_tensor(A, NULL, NULL, false));
    tl_tensor *gA = NULL, *gB = NULL;
    if (want_a) gA = hold(&t, tl_ag_pinv_backward(mm(&t, g, tr(&t, Bm)), pinvA, A));
    if (want_b) gB = mm(&t, tr(&t, pinvA), g);
    if (gL && tl_tensor_numel(gL) > 0) {
        tl_tensor *r = sub(&t, mm(&t, A, Xm), Bm);
        tl_tensor *gl = vec ? hold(&t, tl_ops_unsqueeze(gL, -1)) : gL;
        tl_tensor *rg = r && gl ? hold(&t, tl_ops_mul_Tensor(r, hold(&t, tl_ops_unsqueeze(gl, -2)))) : NULL;
        tl_tensor *rg2 = scale(&t, rg, 2.0);
        if (want_a) gA = add(&t, gA, mm(&t, rg2, tr(&t, Xm)));
        if (want_b) gB = sub(&t, gB, rg2);
    }
    if (gB && vec) gB = hold(&t, tl_ops_squeeze_dim(gB, -1));
    if ((want_a && !gA) || (want_b && !gB)) return finish(&t, NULL), -1;
    if (gA) tl_tensor_retain(gA);
    if (gB) tl_tensor_retain(gB);
    finish(&t, NULL);
    *grad_A = gA, *grad_B = gB;
    return 0;
}

/* ------------------------------------------------------------ matrix_exp */

/* PyTorch's linalg_matrix_exp_differential: the upper right block of
 * exp([[op(A), G], [0, op(A)]]), op(A) = A^T for the adjoint (backward) */
tl_tensor *tl_ag_linalg_matrix_exp_differential(tl_tensor *self, tl_tensor *grad, bool adjoint) {
    if (!grad) return NULL;
    temps t = {.count = 0};
    const int64_t n = size(self, -1);
    tl_tensor *a = adjoint ? tr(&t, self) : self;
    tl_tensor *top = cat2(&t, a, grad, -1);
    tl_tensor *bottom = cat2(&t, zeros_like(&t, self), a, -1);
    tl_tensor *meta = cat2(&t, top, bottom, -2);
    tl_tensor *e = meta ? hold(&t, tl_ops_linalg_matrix_exp(meta)) : NULL;
    return finish(&t, narrow(&t, narrow(&t, e, -2, 0, n), -1, n, n));
}
