"""svd_backward through U, S and Vh (autograd/autograd_svd.c, PyTorch's
FunctionsManual svd_backward for real inputs): finite differences on
square, tall, wide and batched float64 matrices with distinct singular values,
losses of U and Vh that do not depend on the sign (gauge) of the singular
vectors, second derivatives, full_matrices=True, and the gradients against
torch's on the same inputs when torch is installed."""
from __future__ import annotations

import os

import numpy as np
import pytest

tl = pytest.importorskip("torchlet")
from torchlet.autograd import gradcheck, gradgradcheck  # noqa: E402

try:
    if os.environ.get("TORCHLET_ASAN_RUN") == "1":  # torch's C++ exceptions abort under ASan's preload
        raise ImportError
    import torch
except ImportError:  # pragma: no cover - torch is optional
    torch = None

R = np.random.default_rng(9090)
SHAPES = [(4, 4), (5, 3), (3, 5), (2, 4, 3), (2, 3, 4), (1, 1)]


def well_conditioned(shape):
    """random matrices whose singular values are distinct and apart (E has no near-zero entry)"""
    while True:
        a = R.standard_normal(shape)
        s = np.linalg.svd(a, compute_uv=False)
        gaps = np.diff(np.sort(s, axis=-1), axis=-1)
        if s.min() > 0.2 and (gaps.size == 0 or gaps.min() > 0.2):
            return a


def weights(n):
    return np.linspace(0.5, 2.0, n)


def loss(m, which, full=False):
    """a gauge-invariant function of the factors (squares of U / Vh entries, U @ Vh)"""

    def f(a):
        U, S, Vh = m.linalg.svd(a, full_matrices=full)
        k = S.shape[-1]
        if full:  # only the first k columns / rows carry information about A
            U, Vh = U[..., :k], Vh[..., :k, :]
        wu = m.tensor(weights(U.shape[-2])).unsqueeze(-1)
        wv = m.tensor(weights(Vh.shape[-1]))
        terms = {"U": lambda: (U * U * wu).sum(), "Vh": lambda: (Vh * Vh * wv).sum(),
                 "S": lambda: (S * S * S).sum(), "UVh": lambda: ((U @ Vh) * (U @ Vh) * wv).sum()}
        parts = [terms[w]() for w in which.split("+")]
        r = parts[0]
        for p in parts[1:]:
            r = r + p
        return r

    return f


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("which", ["U", "Vh", "U+Vh", "U+S", "S+Vh", "UVh+S"])
def test_gradcheck(shape, which):
    a = tl.tensor(well_conditioned(shape)).requires_grad_()
    assert gradcheck(loss(tl, which), [a])


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4)])
def test_gradgradcheck(shape):
    a = tl.tensor(well_conditioned(shape)).requires_grad_()
    assert gradgradcheck(loss(tl, "U+Vh"), [a])


def test_noncontiguous_input():
    a = tl.tensor(well_conditioned((5, 3))).requires_grad_()
    assert gradcheck(lambda x: loss(tl, "U+Vh+S")(x.t()), [a])


@pytest.mark.skipif(torch is None, reason="torch not installed")
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("full", [False, True])
def test_against_torch(shape, full):
    a = well_conditioned(shape)
    for which in ("U", "Vh", "U+Vh+S", "UVh"):
        x = tl.tensor(a).requires_grad_()
        t = torch.tensor(a).requires_grad_()
        loss(tl, which, full)(x).backward()
        loss(torch, which, full)(t).backward()
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-9, atol=1e-10)


@pytest.mark.skipif(torch is None, reason="torch not installed")
def test_full_matrices_gradients_of_every_column_like_torch():
    """full_matrices=True: the columns beyond k get no gradient (PyTorch narrows them), no error"""
    a = well_conditioned((4, 2))
    x = tl.tensor(a).requires_grad_()
    t = torch.tensor(a).requires_grad_()
    U, _, _ = tl.linalg.svd(x, full_matrices=True)
    tU, _, _ = torch.linalg.svd(t, full_matrices=True)
    (U * U * tl.tensor(weights(4))).sum().backward()
    (tU * tU * torch.tensor(weights(4))).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-9, atol=1e-10)
