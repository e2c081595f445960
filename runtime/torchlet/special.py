"""torchlet.special: PyTorch's torch.special functions that torchlet has.

As torch/special/__init__.py does with torch._C._special, each is the
generated binding of its `python_module: special` operator
(yaml/native_functions.yaml, codegen/emit/python.py), bound in
torchlet._C._special: PyTorch's signatures, overloads (xlogy with a number on
either side), out= and argument errors come from the generator. Most are
CompositeImplicitAutograd aliases of torchlet operators (gammaln -> lgamma,
expit -> sigmoid, psi -> digamma ...); entr, i1 and xlog1py have kernels of
their own
(docs/SPECIAL.md)."""
from __future__ import annotations

from torchlet import _C

_special = _C._special

digamma = _special.special_digamma
entr = _special.special_entr
erf = _special.special_erf
erfc = _special.special_erfc
erfinv = _special.special_erfinv
exp2 = _special.special_exp2
expit = _special.special_expit
expm1 = _special.special_expm1
gammaln = _special.special_gammaln
i0 = _special.special_i0
i1 = _special.special_i1
log1p = _special.special_log1p
log_softmax = _special.special_log_softmax
logit = _special.special_logit
logsumexp = _special.special_logsumexp
ndtr = _special.special_ndtr
polygamma = _special.special_polygamma
psi = _special.special_psi
round = _special.special_round
sinc = _special.special_sinc
softmax = _special.special_softmax
xlogy = _special.special_xlogy
xlog1py = _special.special_xlog1py

__all__ = [
    "digamma", "entr", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "gammaln", "i0", "i1", "log1p",
    "log_softmax", "logit", "logsumexp", "ndtr", "polygamma", "psi", "round", "sinc", "softmax", "xlog1py", "xlogy",
]
