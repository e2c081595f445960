/* torchlet.special's Scalar overloads of the orthogonal polynomials and of
 * zeta, and the aliases gammainc / gammaincc / multigammaln.
 *
 * The operators themselves are structured ufunc operators (formulas in
 * kernels/ufunc/special_<op>.h over tl_special_fns.h, meta functions derived
 * from their entries: docs/SPECIAL.md). The Scalar overloads are PyTorch's
 * CompositeExplicitAutograd kernels: the number wrapped as a 0-dim tensor
 * (it promotes as a Python number), then the Tensor overload.
 */
#include "pointwise_math.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/igamma.h"
#include "ops/igammac.h"
#include "ops/mvlgamma.h"
#include "ops/special_chebyshev_polynomial_t.h"
#include "ops/special_chebyshev_polynomial_u.h"
#include "ops/special_chebyshev_polynomial_v.h"
#include "ops/special_chebyshev_polynomial_w.h"
#include "ops/special_gammainc.h"
#include "ops/special_gammaincc.h"
#include "ops/special_hermite_polynomial_h.h"
#include "ops/special_hermite_polynomial_he.h"
#include "ops/special_laguerre_polynomial_l.h"
#include "ops/special_legendre_polynomial_p.h"
#include "ops/special_multigammaln.h"
#include "ops/special_shifted_chebyshev_polynomial_t.h"
#include "ops/special_shifted_chebyshev_polynomial_u.h"
#include "ops/special_shifted_chebyshev_polynomial_v.h"
#include "ops/special_shifted_chebyshev_polynomial_w.h"
#include "ops/special_zeta.h"
#include "tl_tensor.h"

/* op.<xs>(Scalar, Tensor), op.<ns>(Tensor, Scalar) and their out= forms */
#define TL_SPECIAL_SCALAR_OVERLOADS(op, xs, ns)                                                    \
    tl_tensor *tl_native_##op##_##xs(tl_keyset ks, tl_scalar x, tl_tensor *n) {                    \
        (void)ks;                                                                                  \
        return tl_pointwise_with_number(tl_ops_##op, n, x, 1);                                     \
    }                                                                                              \
    tl_tensor *tl_native_##op##_##ns(tl_keyset ks, tl_tensor *x, tl_scalar n) {                    \
        (void)ks;                                                                                  \
        return tl_pointwise_with_number(tl_ops_##op, x, n, 0);                                     \
    }                                                                                              \
    tl_tensor *tl_native_##op##_##xs##_out(tl_keyset ks, tl_scalar x, tl_tensor *n, tl_tensor *out) { \
        (void)ks;                                                                                  \
        tl_tensor *w = tl_wrapped_scalar(x);                                                       \
        tl_tensor *r = w ? tl_ops_##op##_out(w, n, out) : NULL;                                    \
        tl_tensor_release(w);                                                                      \
        return r;                                                                                  \
    }                                                                                              \
    tl_tensor *tl_native_##op##_##ns##_out(tl_keyset ks, tl_tensor *x, tl_scalar n, tl_tensor *out) { \
        (void)ks;                                                                                  \
        return tl_pointwise_with_number_out(tl_ops_##op##_out, x, n, out);                         \
    }
#define TL_SPECIAL_POLYNOMIAL(op) TL_SPECIAL_SCALAR_OVERLOADS(op, x_scalar, n_scalar)
TL_SPECIAL_POLYNOMIAL(special_chebyshev_polynomial_t)
TL_SPECIAL_POLYNOMIAL(special_chebyshev_polynomial_u)
TL_SPECIAL_POLYNOMIAL(special_chebyshev_polynomial_v)
TL_SPECIAL_POLYNOMIAL(special_chebyshev_polynomial_w)
TL_SPECIAL_POLYNOMIAL(special_shifted_chebyshev_polynomial_t)
TL_SPECIAL_POLYNOMIAL(special_shifted_chebyshev_polynomial_u)
TL_SPECIAL_POLYNOMIAL(special_shifted_chebyshev_polynomial_v)
TL_SPECIAL_POLYNOMIAL(special_shifted_chebyshev_polynomial_w)
TL_SPECIAL_POLYNOMIAL(special_hermite_polynomial_h)
TL_SPECIAL_POLYNOMIAL(special_hermite_polynomial_he)
TL_SPECIAL_POLYNOMIAL(special_laguerre_polynomial_l)
TL_SPECIAL_POLYNOMIAL(special_legendre_polynomial_p)
TL_SPECIAL_SCALAR_OVERLOADS(special_zeta, self_scalar, other_scalar)

/* special_gammainc / gammaincc -> igamma / igammac, special_multigammaln ->
 * mvlgamma (CompositeImplicitAutograd: autograd records the aliased node) */
tl_tensor *tl_native_special_gammainc(tl_keyset ks, tl_tensor *self, tl_tensor *other) {
    (void)ks;
    return tl_ops_igamma(self, other);
}
tl_tensor *tl_native_special_gammainc_out(tl_keyset ks, tl_tensor *self, tl_tensor *other, tl_tensor *out) {
    (void)ks;
    return tl_ops_igamma_out(self, other, out);
}
tl_tensor *tl_native_special_gammaincc(tl_keyset ks, tl_tensor *self, tl_tensor *other) {
    (void)ks;
    return tl_ops_igammac(self, other);
}
tl_tensor *tl_native_special_gammaincc_out(tl_keyset ks, tl_tensor *self, tl_tensor *other, tl_tensor *out) {
    (void)ks;
    return tl_ops_igammac_out(self, other, out);
}
tl_tensor *tl_native_special_multigammaln(tl_keyset ks, tl_tensor *self, int64_t p) {
    (void)ks;
    return tl_ops_mvlgamma(self, p);
}
tl_tensor *tl_native_special_multigammaln_out(tl_keyset ks, tl_tensor *self, int64_t p, tl_tensor *out) {
    (void)ks;
    return tl_ops_mvlgamma_out(self, p, out);
}
