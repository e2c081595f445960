"""Finite-difference gradient checks over torchlet's C autograd API.

The checks talk to the engine through cffi (tl_autograd_set_requires_grad,
tl_autograd_grad, ...), so they depend only on runtime/include/tl_autograd.h
and not on the Python layer above it. Everything runs in float64.
"""
from __future__ import annotations

import numpy as np

import torchlet
from torchlet._tensor import _wrap

L, ffi = torchlet._lib, torchlet._ffi


def err() -> str:
    """the pending error's message, cleared (as the Python bindings do)"""
    msg = ffi.string(L.tl_error_message()).decode()
    L.tl_clear_error()
    return msg


def leaf(a: np.ndarray, requires_grad: bool = True):
    """A float64 leaf tensor holding a copy of ``a``."""
    t = torchlet.tensor(np.array(a, dtype=np.float64))
    if requires_grad:
        assert L.tl_autograd_set_requires_grad(t._p, 1) == 0, err()
    return t


def set_requires_grad(t, flag=True):
    assert L.tl_autograd_set_requires_grad(t._p, 1 if flag else 0) == 0, err()
    return t


def requires_grad(t) -> bool:
    return bool(L.tl_autograd_requires_grad(t._p))


def grad_fn_name(t) -> str | None:
    n = L.tl_autograd_grad_fn(t._p)
    if n == ffi.NULL:
        return None
    try:
        return ffi.string(L.tl_node_name(n)).decode()
    finally:
        L.tl_node_release(n)


def get_grad(t):
    h = L.tl_autograd_get_grad(t._p)
    return None if h == ffi.NULL else _wrap(h)


def backward(out, gradient=None, retain_graph=False, create_graph=False):
    outs = ffi.new("tl_tensor *[1]", [out._p])
    gs = ffi.new("tl_tensor *[1]", [gradient._p]) if gradient is not None else ffi.NULL
    if L.tl_autograd_backward(outs, 1, gs, int(retain_graph), int(create_graph), ffi.NULL, 0) != 0:
        raise RuntimeError(err())


def grad(outputs, inputs, grad_outputs, retain_graph=None, create_graph=False, allow_unused=True):
    """torchlet.autograd.grad through the C API; None for unused inputs;
    retain_graph defaults to create_graph (PyTorch's rule)."""
    if retain_graph is None:
        retain_graph = create_graph
    n, k = len(outputs), len(inputs)
    outs = ffi.new("tl_tensor *[]", [o._p for o in outputs])
    gos = ffi.new("tl_tensor *[]", [g._p for g in grad_outputs])
    ins = ffi.new("tl_tensor *[]", [i._p for i in inputs])
    res = ffi.new("tl_tensor *[]", k)
    rc = L.tl_autograd_grad(outs, n, gos, ins, k, int(retain_graph), int(create_graph), int(allow_unused), res)
    if rc != 0:
        raise RuntimeError(err())
    return [None if res[i] == ffi.NULL else _wrap(res[i]) for i in range(k)]


def _np(t) -> np.ndarray:
    return np.array(t.numpy(), dtype=np.float64)


def jacobians(fn, arrays, diff):
    """(analytic, numeric) Jacobians of fn at arrays w.r.t. arrays[i] for i in diff."""
    xs = [leaf(a, i in diff) for i, a in enumerate(arrays)]
    out = fn(*xs)
    y0 = _np(out)
    m = y0.size
    dx = [xs[i] for i in diff]
    analytic = [np.zeros((m, arrays[i].size)) for i in diff]
    for k in range(m):
        go = np.zeros(y0.shape)
        go.reshape(-1)[k] = 1.0
        gs = grad([out], dx, [leaf(go, False)], retain_graph=True)
        for j, g in enumerate(gs):
            if g is not None:
                analytic[j][k] = _np(g).reshape(-1)
    numeric = []
    eps = 1e-6
    for i in diff:
        num = np.zeros((m, arrays[i].size))
        for p in range(arrays[i].size):
            hi = [a.copy() for a in arrays]
            lo = [a.copy() for a in arrays]
            hi[i].reshape(-1)[p] += eps
            lo[i].reshape(-1)[p] -= eps
            yh = _np(fn(*[leaf(a, j in diff) for j, a in enumerate(hi)]))
            yl = _np(fn(*[leaf(a, j in diff) for j, a in enumerate(lo)]))
            num[:, p] = ((yh - yl) / (2 * eps)).reshape(-1)
        numeric.append(num)
    return analytic, numeric


def gradcheck(fn, arrays, diff=None, atol=1e-5, rtol=1e-3):
    diff = list(range(len(arrays))) if diff is None else list(diff)
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
    analytic, numeric = jacobians(fn, arrays, diff)
    for i, a, n in zip(diff, analytic, numeric):
        np.testing.assert_allclose(a, n, atol=atol, rtol=rtol, err_msg=f"Jacobian mismatch for input {i}")
    return True


def gradgradcheck(fn, arrays, diff=None, seed=0):
    """Second derivatives: gradcheck of x -> sum_i <u_i, d<fn(x), v>/dx_i> (create_graph)."""
    diff = list(range(len(arrays))) if diff is None else list(diff)
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
    rng = np.random.default_rng(seed)
    y = _np(fn(*[leaf(a, False) for a in arrays]))
    v = rng.standard_normal(y.shape)
    us = [rng.standard_normal(arrays[i].shape) for i in diff]

    def first(*xs):
        out = fn(*xs)
        gs = grad([out], [xs[i] for i in diff], [leaf(v, False)], create_graph=True)
        total = None
        for g, u in zip(gs, us):
            if g is None:
                continue
            term = (g * leaf(u, False)).sum()
            total = term if total is None else total + term
        return total

    return gradcheck(first, arrays, diff)
