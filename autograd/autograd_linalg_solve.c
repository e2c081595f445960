/* Backward helpers of the LAPACK solvers (declared in
 * autograd/tl_autograd_formulas.h): PyTorch's FunctionsManual.cpp
 * linalg_solve_backward, linalg_det_backward, slogdet_backward and
 * cholesky_backward for real inputs (mH is the transpose), written over
 * entry points (tl_ops_*) so that they are recorded under create_graph.
 * Solves go through linalg_solve_ex without error checks: a singular matrix
 * gives inf / NaN gradients, as PyTorch's lu_solve path, rather than raising.
 */
#include <math.h>
#include <stdbool.h>

#include "ag_eig.h"
#include "ag_temps.h"
#include "tl_autograd_formulas.h"
#include "tl_error.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/add.h"
#include "ops/cholesky_solve.h"
#include "ops/diag_embed.h"
#include "ops/diagonal.h"
#include "ops/div.h"
#include "ops/expand.h"
#include "ops/eye.h"
#include "ops/linalg_det.h"
#include "ops/linalg_solve_ex.h"
#include "ops/linalg_solve_triangular.h"
#include "ops/linalg_svd.h"
#include "ops/matmul.h"
#include "ops/mul.h"
#include "ops/neg.h"
#include "ops/prod.h"
#include "ops/rsub.h"
#include "ops/squeeze.h"
#include "ops/sub.h"
#include "ops/tril.h"
#include "ops/triu.h"
#include "ops/unsqueeze.h"
#include "ops/zeros_like.h"
#include "tl_tensor.h"


static tl_tensor *matmul(temps *t, tl_tensor *a, tl_tensor *b) {
    return a && b ? hold(t, tl_ops_matmul(a, b)) : NULL;
}

/* X with A X = B (left) or X A = B, no error check */
static tl_tensor *solve(temps *t, tl_tensor *A, tl_tensor *B, bool left) {
    tl_tensor *x = NULL, *info = NULL;
    if (!A || !B || tl_ops_linalg_solve_ex(A, B, left, false, &x, &info)) return NULL;
    tl_tensor_release(info);
    return hold(t, x);
}

/* diag_embed(v) for v [..., n] */
static tl_tensor *diag(temps *t, tl_tensor *v) { return v ? hold(t, tl_ops_diag_embed(v, 0, -2, -1)) : NULL; }

/* c[..., None, None] * I_n for c [...]: diag_embed of c expanded to [..., n] */
static tl_tensor *scaled_identity(temps *t, tl_tensor *c, int64_t n) {
    tl_tensor *u = c ? hold(t, tl_ops_unsqueeze(c, -1)) : NULL;
    if (!u) return NULL;
    int64_t sz[64];   /* TL_MAX_DIMS */
    for (int64_t i = 0; i < tl_tensor_ndim(u); i++) sz[i] = tl_tensor_size(u, i);
    sz[tl_tensor_ndim(u) - 1] = n;
    return diag(t, hold(t, tl_ops_expand(u, sz, tl_tensor_ndim(u), false)));
}

/* gB = A^-T gX (left) / gX A^-T; gA = -gB X^T / -X^T gB (vectors: outer products) */
int tl_ag_linalg_solve_backward(tl_tensor *grad, tl_tensor *result, tl_tensor *A, tl_tensor *LU, tl_tensor *pivots,
                                bool left, bool B_requires_grad, tl_tensor **grad_A, tl_tensor **grad_B) {
    (void)LU, (void)pivots, (void)B_requires_grad;
    *grad_A = *grad_B = NULL;
    if (!grad) return 0;
    temps t = {.count = 0};
    /* PyTorch's linalg_solve_is_vector_rhs(LU, grad): grad [..., n] with A's batch */
    const int64_t gd = tl_tensor_ndim(grad), ad = tl_tensor_ndim(A);
    bool vec = gd == 1;
    if (gd >= 1 && ad - 1 == gd) {
        vec = true;
        for (int64_t i = 0; i < gd; i++) vec = vec && tl_tensor_size(grad, i) == tl_tensor_size(A, i);
    }
    tl_tensor *g = vec ? hold(&t, tl_ops_unsqueeze(grad, -1)) : grad;
    tl_tensor *X = vec ? hold(&t, tl_ops_unsqueeze(result, -1)) : result;
    tl_tensor *gB = solve(&t, tr(&t, A), g, left);
    tl_tensor *gA = left ? matmul(&t, gB, tr(&t, X)) : matmul(&t, tr(&t, X), gB);
    gA = gA ? hold(&t, tl_ops_neg(gA)) : NULL;
    if (gB && vec) gB = hold(&t, tl_ops_squeeze_dim(gB, -1));
    if (!gA || !gB) {
        finish(&t, NULL);
        return -1;
    }
    tl_tensor_retain(gA), tl_tensor_retain(gB);
    finish(&t, NULL);
    *grad_A = gA, *grad_B = gB;
    return 0;
}

/* d det / dA = det A^-T (the cofactor matrix); for a singular A, PyTorch's
 * SVD form U diag(prod_{j != i} S_j) Vh det(U) det(Vh), exact at rank n-1 */
tl_tensor *tl_ag_linalg_det_backward(tl_tensor *grad, tl_tensor *det, tl_tensor *A, tl_tensor *LU,
                                     tl_tensor *pivots) {
    (void)LU, (void)pivots;
    if (!grad) return NULL;
    temps t = {.count = 0};
    tl_tensor *dc = hold(&t, tl_contiguous(det));
    if (!dc) return finish(&t, NULL);
    bool singular = false;   /* some matrix of the batch has det 0 */
    for (int64_t i = 0; i < tl_tensor_numel(dc); i++)
        singular = singular || (tl_tensor_dtype(dc) == TL_FLOAT64 ? ((const double *)tl_tensor_data_ptr(dc))[i] == 0
                                                                  : ((const float *)tl_tensor_data_ptr(dc))[i] == 0);
    tl_tensor *gd = hold(&t, tl_ops_mul_Tensor(grad, det));
    if (!singular) {
        /* (grad det) A^-T = solve(A^T, diag(grad det)) */
        return finish(&t, solve(&t, tr(&t, A), scaled_identity(&t, gd, tl_tensor_size(A, -1)), true));
    }
    tl_tensor *U = NULL, *S = NULL, *Vh = NULL;
    if (tl_ops_linalg_svd(A, true, NULL, &U, &S, &Vh)) return finish(&t, NULL);
    hold(&t, U), hold(&t, S), hold(&t, Vh);
    tl_tensor *dU = hold(&t, tl_ops_linalg_det(U)), *dV = hold(&t, tl_ops_linalg_det(Vh));
    tl_tensor *alpha = dU && dV ? hold(&t, tl_ops_mul_Tensor(dU, dV)) : NULL;
    tl_tensor *ga = alpha && grad ? hold(&t, tl_ops_mul_Tensor(grad, alpha)) : NULL;
    /* prod_{j != i} S_j: the product of S with S_i replaced by one, per i */
    const int64_t k = tl_tensor_size(S, -1);
    tl_tensor *row = hold(&t, tl_ops_unsqueeze(S, -2));
    int64_t sz[64];   /* TL_MAX_DIMS */
    for (int64_t i = 0; row && i < tl_tensor_ndim(row); i++) sz[i] = tl_tensor_size(row, i);
    if (row) sz[tl_tensor_ndim(row) - 2] = k;
    tl_tensor *M = row ? hold(&t, tl_ops_expand(row, sz, tl_tensor_ndim(row), false)) : NULL;
    tl_tensor *I = hold(&t, tl_ops_eye(k, tl_tensor_dtype(S), -1, -1, false, false));
    tl_tensor *off = I ? hold(&t, tl_ops_rsub_Scalar(I, tl_scalar_from_int(1), tl_scalar_from_int(1))) : NULL;
    tl_tensor *Mo = M && off ? hold(&t, tl_ops_mul_Tensor(M, off)) : NULL;
    tl_tensor *Mi = Mo ? hold(&t, tl_ops_add_Tensor(Mo, I, tl_scalar_from_int(1))) : NULL;
    tl_tensor *P = Mi ? hold(&t, tl_ops_prod_dim_int(Mi, -1, false, TL_DTYPE_UNDEFINED)) : NULL;
    tl_tensor *ug = ga ? hold(&t, tl_ops_unsqueeze(ga, -1)) : NULL;
    tl_tensor *D = P && ug ? hold(&t, tl_ops_mul_Tensor(P, ug)) : NULL;
    tl_tensor *Dr = D ? hold(&t, tl_ops_unsqueeze(D, -2)) : NULL;
    tl_tensor *UD = Dr ? hold(&t, tl_ops_mul_Tensor(U, Dr)) : NULL;
    return finish(&t, matmul(&t, UD, Vh));
}

/* real A: d log|det| / dA = A^-T, the sign has no derivative */
tl_tensor *tl_ag_slogdet_backward(tl_tensor *grad_sign, tl_tensor *grad_logabsdet, tl_tensor *A, tl_tensor *sign,
                                  tl_tensor *LU, tl_tensor *pivots) {
    (void)grad_sign, (void)sign, (void)LU, (void)pivots;
    if (!grad_logabsdet) return tl_ops_zeros_like(A, TL_DTYPE_UNDEFINED, -1, -1, false, false, -1);
    temps t = {.count = 0};
    return finish(&t, solve(&t, tr(&t, A), scaled_identity(&t, grad_logabsdet, tl_tensor_size(A, -1)), true));
}

/* PyTorch's cholesky_backward: with L lower (upper: L = U^T),
 *   phi = tril(L^T gL) with its diagonal halved,
 *   gA = sym(L^-T phi L^-1), sym(X) = (X + X^T) / 2 */
tl_tensor *tl_ag_cholesky_backward(tl_tensor *grad, bool upper, tl_tensor *L) {
    if (!grad) return NULL;
    temps t = {.count = 0};
    tl_tensor *gL = upper ? tr(&t, grad) : grad;
    tl_tensor *Lo = upper ? tr(&t, L) : L;
    tl_tensor *X = matmul(&t, tr(&t, Lo), gL);
    tl_tensor *lo = X ? hold(&t, tl_ops_tril(X, 0)) : NULL;
    tl_tensor *dg = X ? hold(&t, tl_ops_diagonal(X, 0, -2, -1)) : NULL;
    tl_tensor *hd = dg ? hold(&t, tl_ops_mul_Scalar(dg, tl_scalar_from_double(0.5))) : NULL;
    tl_tensor *phi = lo && hd ? hold(&t, tl_ops_sub_Tensor(lo, diag(&t, hd), tl_scalar_from_int(1))) : NULL;
    /* L^-T phi L^-1 = solve(L^T, solve(L, phi^T)^T)... as two solves: Y = L^-T phi, gA = Y L^-1 */
    tl_tensor *Y = solve(&t, tr(&t, Lo), phi, true);
    tl_tensor *G = solve(&t, Lo, Y, false);
    tl_tensor *S = G ? hold(&t, tl_ops_add_Tensor(G, tr(&t, G), tl_scalar_from_int(1))) : NULL;
    return finish(&t, S ? hold(&t, tl_ops_mul_Scalar(S, tl_scalar_from_double(0.5))) : NULL);
}

/* PyTorch's linalg_eig_backward (the general case: autograd_linalg_eig.c);
 * for a symmetric real A = V diag(L) V^T:
 *   gA = V (skew(V^T gV) / 2 / E + diag(gL)) V^T,  E_ij = L_j - L_i (1 on the diagonal)
 * (only gL: V diag(gL) V^T). Distinct eigenvalues assumed, as PyTorch. */
tl_tensor *tl_ag_linalg_eig_backward(tl_tensor *gL, tl_tensor *gV, tl_tensor *L, tl_tensor *V, bool is_hermitian) {
    if (!gL && !gV) {
        tl_set_error(TL_ERR_RUNTIME, "linalg_eig_backward: no gradient given");
        return NULL;
    }
    if (!is_hermitian) return tl_ag_linalg_eig_backward_general(gL, gV, L, V);
    temps t = {.count = 0};
    tl_tensor *Vt = tr(&t, V);
    if (!gV) {
        tl_tensor *row = hold(&t, tl_ops_unsqueeze(gL, -2));
        tl_tensor *VgL = row ? hold(&t, tl_ops_mul_Tensor(V, row)) : NULL;
        return finish(&t, matmul(&t, VgL, Vt));
    }
    tl_tensor *VhgV = matmul(&t, Vt, gV);
    tl_tensor *sk = VhgV ? hold(&t, tl_ops_sub_Tensor(VhgV, tr(&t, VhgV), tl_scalar_from_int(1))) : NULL;
    tl_tensor *half = sk ? hold(&t, tl_ops_mul_Scalar(sk, tl_scalar_from_double(0.5))) : NULL;
    tl_tensor *Lr = hold(&t, tl_ops_unsqueeze(L, -2)), *Lc = hold(&t, tl_ops_unsqueeze(L, -1));
    tl_tensor *E = Lr && Lc ? hold(&t, tl_ops_sub_Tensor(Lr, Lc, tl_scalar_from_int(1))) : NULL;
    tl_tensor *I = hold(&t, tl_ops_eye(tl_tensor_size(L, -1), tl_tensor_dtype(L), -1, -1, false, false));
    tl_tensor *E1 = E && I ? hold(&t, tl_ops_add_Tensor(E, I, tl_scalar_from_int(1))) : NULL;
    tl_tensor *M = half && E1 ? hold(&t, tl_ops_div_Tensor(half, E1)) : NULL;  /* its diagonal is 0 */
    if (M && gL) M = hold(&t, tl_ops_add_Tensor(M, diag(&t, gL), tl_scalar_from_int(1)));
    return finish(&t, matmul(&t, V, matmul(&t, M, Vt)));
}

/* PyTorch's linalg_solve_triangular_backward: gB = solve_triangular(A^T, g,
 * !upper), gA = -gB X^T (left) / -X^T gB, kept on A's triangle */
int tl_ag_linalg_solve_triangular_backward(tl_tensor *grad, tl_tensor *A, tl_tensor *X, bool upper, bool left,
                                           bool unitriangular, const bool *grad_input_mask, int64_t n,
                                           tl_tensor **grad_A, tl_tensor **grad_B) {
    *grad_A = *grad_B = NULL;
    if (!grad) return 0;
    const bool want_A = n > 0 && grad_input_mask[0], want_B = n > 1 && grad_input_mask[1];
    temps t = {.count = 0};
    tl_tensor *gB = hold(&t, tl_ops_linalg_solve_triangular(tr(&t, A), grad, !upper, left, unitriangular));
    tl_tensor *gA = NULL;
    if (gB && want_A) {
        tl_tensor *p = left ? matmul(&t, gB, tr(&t, X)) : matmul(&t, tr(&t, X), gB);
        tl_tensor *np_ = p ? hold(&t, tl_ops_neg(p)) : NULL;
        const int64_t d = unitriangular ? 1 : 0;
        gA = np_ ? hold(&t, upper ? tl_ops_triu(np_, d) : tl_ops_tril(np_, -d)) : NULL;
        if (!gA) return finish(&t, NULL), -1;
    }
    if (!gB) return finish(&t, NULL), -1;
    if (gA) tl_tensor_retain(gA);
    if (want_B) tl_tensor_retain(gB);
    finish(&t, NULL);
    *grad_A = gA, *grad_B = want_B ? gB : NULL;
    return 0;
}

/* PyTorch's cholesky_solve_backward: gB = cholesky_solve(g, L),
 * gL = -(gB X^T + X gB^T) L (lower) / -L (...) (upper) */
int tl_ag_cholesky_solve_backward(tl_tensor *grad, tl_tensor *self, tl_tensor *input2, tl_tensor *result, bool upper,
                                  const bool *grad_input_mask, int64_t n, tl_tensor **grad_self,
                                  tl_tensor **grad_input2) {
    (void)self, (void)grad_input_mask, (void)n;
    *grad_self = *grad_input2 = NULL;
    if (!grad) return 0;
    temps t = {.count = 0};
    tl_tensor *gB = hold(&t, tl_ops_cholesky_solve(grad, input2, upper));
    tl_tensor *c = matmul(&t, gB, tr(&t, result));
    tl_tensor *cs = c ? hold(&t, tl_ops_add_Tensor(c, tr(&t, c), tl_scalar_from_int(1))) : NULL;
    tl_tensor *p = upper ? matmul(&t, input2, cs) : matmul(&t, cs, input2);
    tl_tensor *gL = p ? hold(&t, tl_ops_neg(p)) : NULL;
    if (!gB || !gL) return finish(&t, NULL), -1;
    tl_tensor_retain(gB), tl_tensor_retain(gL);
    finish(&t, NULL);
    *grad_self = gB, *grad_input2 = gL;
    return 0;
}

/* PyTorch's cholesky_inverse_backward: -L inv (g + g^T) inv (upper: times L
 * on the left), inv = (L L^T)^-1 */
tl_tensor *tl_ag_cholesky_inverse_backward(tl_tensor *grad, tl_tensor *L, bool upper, tl_tensor *inverse) {
    if (!grad) return NULL;
    temps t = {.count = 0};
    tl_tensor *g = hold(&t, tl_ops_add_Tensor(grad, tr(&t, grad), tl_scalar_from_int(1)));
    tl_tensor *c = matmul(&t, inverse, matmul(&t, g, inverse));
    tl_tensor *p = upper ? matmul(&t, L, c) : matmul(&t, c, L);
    return finish(&t, p ? hold(&t, tl_ops_neg(p)) : NULL);
}
