/* PyTorch's linalg_eig_backward (FunctionsManual.cpp) for a general square
 * A = V diag(L) V^-1 with complex L and V (linalg.eig):
 *
 *   gA = V^-H (P / conj(E) with diag(gL) on its diagonal) V^H,
 *   P = V^H gV - V^H V diag(re(diag(V^H gV))),  E_ij = L_j - L_i (1 on the diagonal)
 *
 * (only gL: V^-H diag(gL) V^H). The loss must not depend on the phase of the
 * eigenvectors: PyTorch's check that im(diag(V^H gV)) is ~0 and its message.
 * The complex solve with V^H is the real one of twice the size,
 * [[Re M, -Im M], [Im M, Re M]] [Re X; Im X] = [Re B; Im B] (torchlet's LAPACK
 * solvers are real), written over entry points like every term here so that
 * the gradient differentiates again. */
#include <math.h>
#include <stdbool.h>

#include "ag_eig.h"
#include "ag_temps.h"
#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/add.h"
#include "ops/cat.h"
#include "ops/complex.h"
#include "ops/conj.h"
#include "ops/diag_embed.h"
#include "ops/diagonal.h"
#include "ops/div.h"
#include "ops/eye.h"
#include "ops/imag.h"
#include "ops/linalg_solve_ex.h"
#include "ops/matmul.h"
#include "ops/mul.h"
#include "ops/narrow.h"
#include "ops/neg.h"
#include "ops/real.h"
#include "ops/sub.h"
#include "ops/unsqueeze.h"
#include "tl_tensor.h"

static tl_tensor *mm(temps *t, tl_tensor *a, tl_tensor *b) { return a && b ? hold(t, tl_ops_matmul(a, b)) : NULL; }

/* x^H */
static tl_tensor *mH(temps *t, tl_tensor *x) {
    tl_tensor *c = x ? hold(t, tl_ops_conj(x)) : NULL;
    return tr(t, c);
}

static tl_tensor *part(temps *t, tl_tensor *x, bool imag) {
    return x ? hold(t, imag ? tl_ops_imag(x) : tl_ops_real(x)) : NULL;
}

static tl_tensor *cat2(temps *t, tl_tensor *a, tl_tensor *b, int64_t dim) {
    tl_tensor *l[2] = {a, b};
    return a && b ? hold(t, tl_ops_cat(l, 2, dim)) : NULL;
}

/* X with M X = B, M [..., n, n] and B [..., n, k] complex, through the real system of size 2n */
static tl_tensor *complex_solve(temps *t, tl_tensor *M, tl_tensor *B) {
    if (!M || !B) return NULL;
    const int64_t n = tl_tensor_size(M, -1);
    tl_tensor *Mr = part(t, M, false), *Mi = part(t, M, true);
    tl_tensor *nMi = Mi ? hold(t, tl_ops_neg(Mi)) : NULL;
    tl_tensor *big = cat2(t, cat2(t, Mr, nMi, -1), cat2(t, Mi, Mr, -1), -2);
    tl_tensor *rhs = cat2(t, part(t, B, false), part(t, B, true), -2);
    tl_tensor *x = NULL, *info = NULL;
    if (!big || !rhs || tl_ops_linalg_solve_ex(big, rhs, true, false, &x, &info)) return NULL;
    tl_tensor_release(info);
    hold(t, x);
    tl_tensor *xr = hold(t, tl_ops_narrow(x, -2, 0, n)), *xi = hold(t, tl_ops_narrow(x, -2, n, n));
    return xr && xi ? hold(t, tl_ops_complex(xr, xi)) : NULL;
}

/* PyTorch's gauge check: allclose(im(diag(V^H gV)), 0, rtol=1e-2, atol=1e-2) */
static int check_phase_invariance(tl_tensor *d) {
    tl_tensor *c = tl_contiguous(d);
    if (!c) return -1;
    const bool f32 = tl_tensor_dtype(c) == TL_COMPLEX64;
    const char *p = tl__data(c);
    bool ok = true;
    for (int64_t i = 0; ok && i < tl_tensor_numel(c); i++) {
        const double im = f32 ? ((const float *)p)[2 * i + 1] : ((const double *)p)[2 * i + 1];
        ok = fabs(im) <= 1e-2;   /* a NaN fails, as allclose */
    }
    tl_tensor_release(c);
    if (ok) return 0;
    return tl_set_error(TL_ERR_RUNTIME, "linalg_eig_backward: The eigenvectors in the complex case are specified up to "
                                        "multiplication by e^{i phi}. The specified loss function depends on this "
                                        "quantity, so it is ill-defined.");
}

tl_tensor *tl_ag_linalg_eig_backward_general(tl_tensor *gL, tl_tensor *gV, tl_tensor *L, tl_tensor *V) {
    temps t = {.count = 0};
    tl_tensor *Vh = mH(&t, V);
    if (!gV) {   /* linalg.eigvals: V^-H diag(gL) V^H */
        tl_tensor *col = hold(&t, tl_ops_unsqueeze(gL, -1));
        return finish(&t, complex_solve(&t, Vh, col && Vh ? hold(&t, tl_ops_mul_Tensor(col, Vh)) : NULL));
    }
    tl_tensor *VhgV = mm(&t, Vh, gV);
    tl_tensor *d = VhgV ? hold(&t, tl_ops_diagonal(VhgV, 0, -2, -1)) : NULL;
    if (!d || check_phase_invariance(d)) return finish(&t, NULL);
    tl_tensor *rd = part(&t, d, false);
    tl_tensor *row = rd ? hold(&t, tl_ops_unsqueeze(rd, -2)) : NULL;
    tl_tensor *Vs = row ? hold(&t, tl_ops_mul_Tensor(V, row)) : NULL;
    tl_tensor *proj = mm(&t, Vh, Vs);
    tl_tensor *P = proj ? hold(&t, tl_ops_sub_Tensor(VhgV, proj, tl_scalar_from_int(1))) : NULL;
    tl_tensor *Lc = hold(&t, tl_ops_conj(L));
    tl_tensor *Lr = Lc ? hold(&t, tl_ops_unsqueeze(Lc, -2)) : NULL, *Lk = Lc ? hold(&t, tl_ops_unsqueeze(Lc, -1)) : NULL;
    tl_tensor *E = Lr && Lk ? hold(&t, tl_ops_sub_Tensor(Lr, Lk, tl_scalar_from_int(1))) : NULL;
    tl_tensor *I = hold(&t, tl_ops_eye(tl_tensor_size(L, -1), tl_dtype_to_real(tl_tensor_dtype(L)), -1, -1, false,
                                       false));
    tl_tensor *E1 = E && I ? hold(&t, tl_ops_add_Tensor(E, I, tl_scalar_from_int(1))) : NULL;
    tl_tensor *M = P && E1 ? hold(&t, tl_ops_div_Tensor(P, E1)) : NULL;
    if (M && gL) {   /* M's diagonal replaced by gL */
        tl_tensor *md = hold(&t, tl_ops_diagonal(M, 0, -2, -1));
        tl_tensor *dm = md ? hold(&t, tl_ops_diag_embed(md, 0, -2, -1)) : NULL;
        tl_tensor *dg = hold(&t, tl_ops_diag_embed(gL, 0, -2, -1));
        tl_tensor *off = dm ? hold(&t, tl_ops_sub_Tensor(M, dm, tl_scalar_from_int(1))) : NULL;
        M = off && dg ? hold(&t, tl_ops_add_Tensor(off, dg, tl_scalar_from_int(1))) : NULL;
    }
    return finish(&t, complex_solve(&t, Vh, mm(&t, M, Vh)));
}
