"""The window functions of torch.signal.windows over torchlet operators.

Signatures (M positional, the rest keyword-only), checks and messages are
PyTorch's. Each window is a linspace of M points through an elementwise
formula, so it has the requested dtype (float32 / float64; the default dtype
when not given) and differentiates through its operators when
``requires_grad=True``. torchlet has only strided tensors: ``layout`` may be
None or ``"strided"``."""
from __future__ import annotations

import math
from collections.abc import Iterable

import torchlet as tl

_STRIDED = (None, "strided", 0)


def _checks(name, M, dtype, layout):
    """the checks every window makes first; returns the dtype to use"""
    if dtype is None:
        dtype = tl.get_default_dtype()
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if not any(layout is s or layout == s for s in _STRIDED):
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (tl.float32, tl.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _trivial(M, dtype, device, requires_grad):
    """the window of length 0 (empty) or 1 (a single one), else None"""
    if M == 0:
        return tl.empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    if M == 1:
        return tl.ones((1,), dtype=dtype, device=device, requires_grad=requires_grad)
    return None


def _points(start, end, M, dtype, device, requires_grad):
    """M evenly spaced points from start to end (the ends computed as PyTorch does, so they round alike)"""
    return tl.linspace(start, end, M, dtype=dtype, device=device, requires_grad=requires_grad)


def exponential(M: int, *, center: float | None = None, tau: float = 1.0, sym: bool = True, dtype=None,
                layout=None, device=None, requires_grad: bool = False):
    """exp(-|n - center| / tau)"""
    dtype = _checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return tl.empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    c = 1 / tau
    k = _points(-center * c, (-center + (M - 1)) * c, M, dtype, device, requires_grad)
    return tl.exp(-tl.abs(k))


def cosine(M: int, *, sym: bool = True, dtype=None, layout=None, device=None, requires_grad: bool = False):
    """sin(pi (n + 1/2) / M) (M + 1 for a periodic window)"""
    dtype = _checks("cosine", M, dtype, layout)
    if M == 0:
        return tl.empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    step = math.pi / (M + 1 if not sym and M > 1 else M)
    return tl.sin(_points(0.5 * step, (0.5 + (M - 1)) * step, M, dtype, device, requires_grad))


def gaussian(M: int, *, std: float = 1.0, sym: bool = True, dtype=None, layout=None, device=None,
             requires_grad: bool = False):
    """exp(-((n - (M - 1) / 2) / std)^2 / 2)"""
    dtype = _checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return tl.empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    scale = 1 / (std * math.sqrt(2))
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    k = _points(start * scale, (start + (M - 1)) * scale, M, dtype, device, requires_grad)
    return tl.exp(-(k * k))


def kaiser(M: int, *, beta: float = 12.0, sym: bool = True, dtype=None, layout=None, device=None,
           requires_grad: bool = False):
    """I0(beta sqrt(1 - (2n / (M - 1) - 1)^2)) / I0(beta), written as PyTorch writes it
    (beta as a tensor of the dtype, the last point capped at beta) so rounding matches"""
    dtype = _checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    small = _trivial(M, dtype, device, requires_grad)
    if small is not None:
        return small
    b = tl.tensor(beta, dtype=dtype, device=device)
    step = 2.0 * b / (M if not sym else M - 1)
    end = tl.minimum(b, -b + (M - 1) * step)
    k = tl.linspace(-b, end, M, dtype=dtype, device=device, requires_grad=requires_grad)
    return tl.i0(tl.sqrt(b * b - tl.pow(k, 2))) / tl.i0(b)


def general_cosine(M, *, a: Iterable, sym: bool = True, dtype=None, layout=None, device=None,
                   requires_grad: bool = False):
    """sum_i (-1)^i a_i cos(2 pi i n / (M - 1)) (M for a periodic window)"""
    dtype = _checks("general_cosine", M, dtype, layout)
    small = _trivial(M, dtype, device, requires_grad)
    if small is not None:
        return small
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    step = 2 * math.pi / (M if not sym else M - 1)
    k = _points(0, (M - 1) * step, M, dtype, device, requires_grad)
    coef = tl.tensor([(-1) ** i * w for i, w in enumerate(a)], dtype=dtype, device=device,
                     requires_grad=requires_grad)
    i = tl.arange(coef.shape[0], dtype=dtype, device=device, requires_grad=requires_grad)
    return (coef.unsqueeze(-1) * tl.cos(i.unsqueeze(-1) * k)).sum(0)


def general_hamming(M, *, alpha: float = 0.54, sym: bool = True, dtype=None, layout=None, device=None,
                    requires_grad: bool = False):
    """alpha - (1 - alpha) cos(2 pi n / (M - 1))"""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def hamming(M: int, *, sym: bool = True, dtype=None, layout=None, device=None, requires_grad: bool = False):
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def hann(M: int, *, sym: bool = True, dtype=None, layout=None, device=None, requires_grad: bool = False):
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M: int, *, sym: bool = True, dtype=None, layout=None, device=None, requires_grad: bool = False):
    dtype = _checks("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def nuttall(M: int, *, sym: bool = True, dtype=None, layout=None, device=None, requires_grad: bool = False):
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def bartlett(M: int, *, sym: bool = True, dtype=None, layout=None, device=None, requires_grad: bool = False):
    """1 - |2n / (M - 1) - 1|"""
    dtype = _checks("bartlett", M, dtype, layout)
    small = _trivial(M, dtype, device, requires_grad)
    if small is not None:
        return small
    k = _points(-1, -1 + (M - 1) * (2 / (M if not sym else M - 1)), M, dtype, device, requires_grad)
    return 1 - tl.abs(k)
