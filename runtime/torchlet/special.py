"""torchlet.special: PyTorch's torch.special functions that torchlet has.

As torch/special/__init__.py does with torch._C._special, each is the
generated binding of its `python_module: special` operator
(yaml/native_functions.yaml, codegen/emit/python.py), bound in
torchlet._C._special: PyTorch's signatures, overloads (xlogy with a number on
either side), out= and argument errors come from the generator. Most are
CompositeImplicitAutograd aliases of torchlet operators (gammaln -> lgamma,
expit -> sigmoid, psi -> digamma, gammainc -> igamma ...); entr, i1, xlog1py,
the normal-distribution, Bessel and Airy functions, the orthogonal polynomials
and zeta have kernels of their own (docs/SPECIAL.md)."""
from __future__ import annotations

from torchlet import _C

_special = _C._special

airy_ai = _special.special_airy_ai
bessel_j0 = _special.special_bessel_j0
bessel_j1 = _special.special_bessel_j1
bessel_y0 = _special.special_bessel_y0
bessel_y1 = _special.special_bessel_y1
chebyshev_polynomial_t = _special.special_chebyshev_polynomial_t
chebyshev_polynomial_u = _special.special_chebyshev_polynomial_u
chebyshev_polynomial_v = _special.special_chebyshev_polynomial_v
chebyshev_polynomial_w = _special.special_chebyshev_polynomial_w
digamma = _special.special_digamma
entr = _special.special_entr
erf = _special.special_erf
erfc = _special.special_erfc
erfcx = _special.special_erfcx
erfinv = _special.special_erfinv
exp2 = _special.special_exp2
expit = _special.special_expit
expm1 = _special.special_expm1
gammainc = _special.special_gammainc
gammaincc = _special.special_gammaincc
gammaln = _special.special_gammaln
hermite_polynomial_h = _special.special_hermite_polynomial_h
hermite_polynomial_he = _special.special_hermite_polynomial_he
i0 = _special.special_i0
i0e = _special.special_i0e
i1 = _special.special_i1
i1e = _special.special_i1e
laguerre_polynomial_l = _special.special_laguerre_polynomial_l
legendre_polynomial_p = _special.special_legendre_polynomial_p
log1p = _special.special_log1p
log_ndtr = _special.special_log_ndtr
log_softmax = _special.special_log_softmax
logit = _special.special_logit
logsumexp = _special.special_logsumexp
modified_bessel_i0 = _special.special_modified_bessel_i0
modified_bessel_i1 = _special.special_modified_bessel_i1
modified_bessel_k0 = _special.special_modified_bessel_k0
modified_bessel_k1 = _special.special_modified_bessel_k1
multigammaln = _special.special_multigammaln
ndtr = _special.special_ndtr
ndtri = _special.special_ndtri
polygamma = _special.special_polygamma
psi = _special.special_psi
round = _special.special_round
scaled_modified_bessel_k0 = _special.special_scaled_modified_bessel_k0
scaled_modified_bessel_k1 = _special.special_scaled_modified_bessel_k1
shifted_chebyshev_polynomial_t = _special.special_shifted_chebyshev_polynomial_t
shifted_chebyshev_polynomial_u = _special.special_shifted_chebyshev_polynomial_u
shifted_chebyshev_polynomial_v = _special.special_shifted_chebyshev_polynomial_v
shifted_chebyshev_polynomial_w = _special.special_shifted_chebyshev_polynomial_w
sinc = _special.special_sinc
softmax = _special.special_softmax
spherical_bessel_j0 = _special.special_spherical_bessel_j0
xlog1py = _special.special_xlog1py
xlogy = _special.special_xlogy
zeta = _special.special_zeta

__all__ = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma", "entr", "erf", "erfc",
    "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln", "hermite_polynomial_h",
    "hermite_polynomial_he", "i0", "i0e", "i1", "i1e", "laguerre_polynomial_l", "legendre_polynomial_p", "log1p",
    "log_ndtr", "log_softmax", "logit", "logsumexp", "modified_bessel_i0", "modified_bessel_i1",
    "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round",
    "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "sinc",
    "softmax", "spherical_bessel_j0", "xlog1py", "xlogy", "zeta",
]
