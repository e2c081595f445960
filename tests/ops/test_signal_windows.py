"""torchlet.signal.windows (runtime/torchlet/signal/windows/windows.py):
values against numpy's windows (always) and torch.signal.windows (when
installed), dtypes, periodic windows, lengths 0 / 1, errors, gradients."""
import math

import numpy as np
import pytest

import torchlet as tl
from torchlet.signal import windows as W

from ops_helpers import needs_torch, torch


@pytest.mark.parametrize("M", [0, 1, 2, 7, 16])
def test_against_numpy(M):
    for f, ref in ((W.bartlett, np.bartlett), (W.blackman, np.blackman), (W.hamming, np.hamming),
                   (W.hann, np.hanning), (lambda m, **k: W.kaiser(m, beta=4.5, **k), lambda m: np.kaiser(m, 4.5))):
        r = f(M, dtype=tl.float64)
        assert r.dtype is tl.float64 and tuple(r.shape) == (M,)
        np.testing.assert_allclose(r.numpy(), ref(M), rtol=1e-12, atol=1e-14)
    n = np.arange(M)
    np.testing.assert_allclose(W.gaussian(M, std=1.5, dtype=tl.float64).numpy(),
                               np.exp(-0.5 * ((n - (M - 1) / 2) / 1.5) ** 2), atol=1e-14)
    np.testing.assert_allclose(W.cosine(M, dtype=tl.float64).numpy(), np.sin(np.pi * (n + 0.5) / M), atol=1e-14)
    np.testing.assert_allclose(W.exponential(M, tau=2.0, dtype=tl.float64).numpy(),
                               np.exp(-np.abs(n - (M - 1) / 2) / 2.0), atol=1e-14)


def test_periodic_default_dtype_and_custom():
    # a periodic window of length M is the symmetric one of length M + 1 without its last point
    for f in (W.hann, W.hamming, W.blackman, W.bartlett, W.nuttall):
        np.testing.assert_allclose(f(8, sym=False).numpy(), f(9).numpy()[:-1], rtol=1e-6, atol=1e-6)
        assert f(8).dtype is tl.get_default_dtype()
    c = W.general_cosine(6, a=(0.5, 0.3, 0.2), dtype=tl.float64).numpy()
    k = 2 * math.pi * np.arange(6) / 5
    np.testing.assert_allclose(c, 0.5 - 0.3 * np.cos(k) + 0.2 * np.cos(2 * k), atol=1e-14)
    np.testing.assert_allclose(W.general_hamming(5, alpha=0.6, dtype=tl.float64).numpy(),
                               0.6 - 0.4 * np.cos(2 * math.pi * np.arange(5) / 4), atol=1e-14)
    e = W.exponential(7, center=2.0, sym=False, dtype=tl.float64).numpy()
    np.testing.assert_allclose(e, np.exp(-np.abs(np.arange(7) - 2.0)), atol=1e-14)
    g = W.hann(5, dtype=tl.float64, requires_grad=True)
    assert g.requires_grad


def test_errors():
    cases = [(lambda: W.hann(-1), ValueError, "general_cosine requires non-negative window length, got M=-1"),
             (lambda: W.bartlett(3, dtype=tl.int64), ValueError,
              "bartlett expects float32 or float64 dtypes, got: torchlet.int64"),
             (lambda: W.kaiser(3, layout="sparse"), ValueError, "kaiser is implemented for strided tensors only, got: sparse"),
             (lambda: W.kaiser(3, beta=-1), ValueError, "beta must be non-negative, got: -1 instead."),
             (lambda: W.gaussian(3, std=0), ValueError, "Standard deviation must be positive, got: 0 instead."),
             (lambda: W.exponential(3, tau=0), ValueError, "Tau must be positive, got: 0 instead."),
             (lambda: W.exponential(3, center=1.0), ValueError, "Center must be None for symmetric windows"),
             (lambda: W.general_cosine(3, a=[]), ValueError, "Coefficients cannot be empty"),
             (lambda: W.general_cosine(3, a=1), TypeError, "Coefficients must be a list/tuple")]
    for fn, kind, msg in cases:
        with pytest.raises(kind) as e:
            fn()
        assert str(e.value) == msg
    with pytest.raises(TypeError):
        W.hann(5, True)   # options are keyword-only


@needs_torch
@pytest.mark.parametrize("name", ["bartlett", "blackman", "cosine", "exponential", "gaussian", "hamming", "hann",
                                  "kaiser", "nuttall", "general_hamming"])
def test_against_torch(name):
    import torch.signal.windows as TW
    for M in (0, 1, 2, 5, 12):
        for sym in (True, False):
            for dt, tdt in ((tl.float32, torch.float32), (tl.float64, torch.float64)):
                r, e = getattr(W, name)(M, sym=sym, dtype=dt), getattr(TW, name)(M, sym=sym, dtype=tdt)
                assert r.dtype is dt
                np.testing.assert_allclose(r.numpy(), e.numpy(), rtol=1.3e-6, atol=1e-6)
