/* svd_backward (the derivative of _linalg_svd, so of linalg_svd,
 * linalg_svdvals and the 'nuc' / 2 / -2 matrix norms), declared in
 * autograd/tl_autograd_formulas.h. PyTorch's FunctionsManual.cpp
 * svd_backward for real inputs, written over entry points (tl_ops_*) so that
 * it is recorded under create_graph and differentiates again.
 *
 * A = U diag(S) Vh with the reduced U [.., m, k], S [.., k], Vh [.., k, n]
 * (the derivative entry narrows full_matrices=True factors to k columns /
 * rows, as PyTorch's). With skew(X) = X - X^T, E_ij = S_j^2 - S_i^2 (1 on the
 * diagonal, where the skew numerators are 0):
 *     inner = (skew(U^T gU) * S_j + S_i * skew(Vh gVh^T)) / E + diag(gS)
 *     gA    = U inner Vh
 *           + (I - U U^T) gU S^-1 Vh          (m > k, gU given)
 *           + U S^-1 gVh (I - Vh^T Vh)        (n > k, gVh given)
 * Only gS: gA = U diag(gS) Vh. Distinct singular values are assumed (E has
 * no zero off the diagonal), as in PyTorch; real dtypes only, so PyTorch's
 * complex phase (gauge) check does not apply. */
#include <stdbool.h>

#include "tl_ag_pool.h"
#include "tl_autograd_formulas.h"
#include "tl_error.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/matmul.h"
#include "ops/transpose.h"
#include "tl_tensor.h"

static tl_tensor *mT(pool *p, tl_tensor *x) { return x ? keep(p, tl_ops_transpose_int(x, -2, -1)) : NULL; }

static tl_tensor *mm(pool *p, tl_tensor *a, tl_tensor *b) { return a && b ? keep(p, tl_ops_matmul(a, b)) : NULL; }

/* skew(X) = X - X^T */
static tl_tensor *skew(pool *p, tl_tensor *x) { return sub(p, x, mT(p, x)); }

/* the k x k identity of S's dtype: a constant (diag_embed and E's diagonal) */
static tl_tensor *identity(pool *p, const tl_tensor *S, int64_t k) {
    int64_t sizes[2] = {k, k};
    tl_dtype dt = tl_tensor_dtype(S);
    tl_tensor *e = keep(p, tl_zeros(2, sizes, dt, tl_tensor_device(S)));
    if (!e) return NULL;
    char *d = tl_tensor_data_ptr(e);
    for (int64_t i = 0; i < k; i++) {
        if (dt == TL_FLOAT64)
            ((double *)d)[i * k + i] = 1.0;
        else if (dt == TL_FLOAT32)
            ((float *)d)[i * k + i] = 1.0f;
        else {
            tl_set_error(TL_ERR_TYPE, "svd_backward: expected a float or double tensor");
            return NULL;
        }
    }
    return e;
}

static tl_tensor *svd_backward(pool *p, tl_tensor *gU, tl_tensor *gS, tl_tensor *gVh, tl_tensor *U, tl_tensor *S,
                               tl_tensor *Vh) {
    const int64_t m = tl_tensor_size(U, -2), n = tl_tensor_size(Vh, -1), k = tl_tensor_size(S, -1);
    if (!gU && !gVh) /* svdvals: U diag(gS) Vh, the product order PyTorch uses */
        return m >= n ? mm(p, U, mul(p, unsq(p, gS, -1), Vh)) : mm(p, mul(p, U, unsq(p, gS, -2)), Vh);
    tl_tensor *Srow = unsq(p, S, -2), *Scol = unsq(p, S, -1);
    tl_tensor *I = identity(p, S, k);
    if (!Srow || !Scol || !I) return NULL;
    tl_tensor *S2 = mul(p, S, S);
    tl_tensor *E = add(p, sub(p, unsq(p, S2, -2), unsq(p, S2, -1)), I);
    if (!E) return NULL;
    tl_tensor *UhgU = gU ? skew(p, mm(p, mT(p, U), gU)) : NULL;
    tl_tensor *VhgV = gVh ? skew(p, mm(p, Vh, mT(p, gVh))) : NULL;
    if ((gU && !UhgU) || (gVh && !VhgV)) return NULL;
    tl_tensor *inner;
    if (gU && gVh)
        inner = divide(p, add(p, mul(p, UhgU, Srow), mul(p, Scol, VhgV)), E);
    else if (gU)
        inner = mul(p, divide(p, UhgU, E), Srow);
    else
        inner = divide(p, mul(p, Scol, VhgV), E);
    if (gS) inner = add(p, inner, mul(p, unsq(p, gS, -1), I)); /* + diag_embed(gS) */
    if (!inner) return NULL;
    if (m > k && gU) { /* [U inner + (I_m - U U^T) gU S^-1] Vh */
        tl_tensor *gUSinv = divide(p, gU, Srow);
        tl_tensor *g = sub(p, add(p, mm(p, U, inner), gUSinv), mm(p, U, mm(p, mT(p, U), gUSinv)));
        return mm(p, g, Vh);
    }
    if (n > k && gVh) { /* U [inner Vh + S^-1 gVh (I_n - Vh^T Vh)] */
        tl_tensor *SinvgVh = divide(p, gVh, Scol);
        tl_tensor *g = sub(p, add(p, mm(p, inner, Vh), SinvgVh), mm(p, mm(p, SinvgVh, mT(p, Vh)), Vh));
        return mm(p, U, g);
    }
    return m >= n ? mm(p, U, mm(p, inner, Vh)) : mm(p, mm(p, U, inner), Vh);
}

tl_tensor *tl_ag_svd_backward(tl_tensor *gU, tl_tensor *gS, tl_tensor *gVh, tl_tensor *U, tl_tensor *S,
                              tl_tensor *Vh) {
    if (!gU && !gS && !gVh) {
        tl_set_error(TL_ERR_RUNTIME, "svd_backward: no gradient given");
        return NULL;
    }
    pool p = {.n = 0};
    tl_tensor *r = svd_backward(&p, gU, gS, gVh, U, S, Vh);
    r = pool_out(r);
    pool_release(&p);
    return r;
}
