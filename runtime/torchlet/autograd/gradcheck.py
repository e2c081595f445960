"""gradcheck / gradgradcheck: backward formulas against finite differences.

``gradcheck`` compares, for every differentiable input x_i (a tensor with
requires_grad) and every floating output y_k, the Jacobian computed by
autograd (one ``autograd.grad`` call per output element, grad_output = a
one-hot tensor) with central differences (x +- eps, in place through a numpy
view of x, so views and strides are exercised as given). Inputs should be
float64. ``gradgradcheck`` runs gradcheck on the function that returns the
gradients (create_graph=True), checking second derivatives.
"""
from __future__ import annotations

import warnings

import numpy as np

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck / gradgradcheck when a check fails."""


def _Tensor():
    from .._tensor import Tensor
    return Tensor


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _diff_inputs(inputs):
    T = _Tensor()
    return [(i, t) for i, t in enumerate(inputs) if isinstance(t, T) and t.requires_grad]


def _float_outputs(outputs):
    T = _Tensor()
    return [(k, o) for k, o in enumerate(outputs) if isinstance(o, T) and o.is_floating_point()]


def _to_numpy(t) -> np.ndarray:
    return np.array(t.detach().numpy(), dtype=np.float64, copy=True)


def _fail(msg: str, raise_exception: bool) -> bool:
    if raise_exception:
        raise GradcheckError(msg)
    return False


def _check_inputs(diff, raise_exception: bool) -> bool:
    for i, t in diff:
        if t.dtype.itemsize < 8 and t.is_floating_point():
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating point. "
                          "This check will likely fail if all the inputs are not of double precision "
                          "floating point. ", UserWarning, stacklevel=3)
        for d in range(t.dim() if t.numel() else 0):
            if t.stride(d) == 0 and t.size(d) > 1:
                return _fail(f"The {i}th input has a dimension with stride 0. gradcheck only supports inputs "
                             "that are non-overlapping to be able to compute the numerical gradients "
                             "correctly. You should call .contiguous on the input before passing it to "
                             "gradcheck.", raise_exception)
    return True


def _numerical_jacobian(func, inputs, diff, n_out, eps):
    """jac[i][k]: (numel(x_i), numel(y_k)) central differences."""
    jac = []
    for _i, x in diff:
        view = x.detach().numpy()  # shares x's memory: perturb in place
        cols = [[] for _ in range(n_out)]
        for idx in np.ndindex(view.shape):
            orig = view[idx].item()
            view[idx] = orig - eps
            minus = [_to_numpy(o) if o is not None else None for o in _outputs_for(func, inputs, n_out)]
            view[idx] = orig + eps
            plus = [_to_numpy(o) if o is not None else None for o in _outputs_for(func, inputs, n_out)]
            view[idx] = orig
            for k in range(n_out):
                if plus[k] is None:
                    cols[k].append(None)
                else:
                    cols[k].append(((plus[k] - minus[k]) / (2 * eps)).reshape(-1))
        per_out = []
        for k in range(n_out):
            if cols[k] and cols[k][0] is None:
                per_out.append(None)
            elif not cols[k]:
                per_out.append(np.zeros((0, 0)))
            else:
                per_out.append(np.stack(cols[k], axis=0))
        jac.append(per_out)
    return jac


def _outputs_for(func, inputs, n_out):
    outs = _as_tuple(func(*inputs))
    T = _Tensor()
    return [o if isinstance(o, T) and o.is_floating_point() else None for o in outs][:n_out]


def _analytical_jacobian(outputs, diff, raise_exception):
    """jac[i][k] from autograd.grad, one one-hot grad_output per output element."""
    from . import grad as autograd_grad
    from .._tensor import from_numpy

    xs = [x for _i, x in diff]
    jac = [[None] * len(outputs) for _ in diff]
    for k, o in enumerate(outputs):
        if o is None:
            continue
        n = o.numel()
        rows = [np.zeros((x.numel(), n)) for x in xs]
        if o.requires_grad:
            for j in range(n):
                onehot = np.zeros(n, dtype=np.float64)
                onehot[j] = 1.0
                go = from_numpy(onehot.reshape(tuple(o.shape))).to(o.dtype)
                gs = autograd_grad(o, xs, go, retain_graph=True, allow_unused=True)
                for i, g in enumerate(gs):
                    if g is None:
                        continue
                    if tuple(g.shape) != tuple(xs[i].shape):
                        _fail(f"Gradient has shape mismatch: grad for input {diff[i][0]} has shape "
                              f"{list(g.shape)}, expected {list(xs[i].shape)}", True)
                    if g.dtype != xs[i].dtype:
                        _fail(f"Gradient has dtype mismatch: grad for input {diff[i][0]} has dtype {g.dtype}, "
                              f"expected {xs[i].dtype}", True)
                    rows[i][:, j] = _to_numpy(g).reshape(-1)
        for i in range(len(xs)):
            jac[i][k] = rows[i]
    return jac


def gradcheck(func, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
              fast_mode: bool = False, **unsupported) -> bool:
    """Check the gradients of `func` at `inputs` against central finite
    differences (x +- eps); entries agree when |a - n| <= atol + rtol * |n|.
    Returns True, or raises GradcheckError (False when raise_exception=False)."""
    for key, value in unsupported.items():
        if value:
            raise NotImplementedError(f"torchlet.autograd.gradcheck: {key}=True is not supported")
    inputs = _as_tuple(inputs)
    diff = _diff_inputs(inputs)
    if not diff:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of the "
                         "them have requires_grad=True.")
    if not _check_inputs(diff, raise_exception):
        return False
    outputs = _as_tuple(func(*inputs))
    fouts = [None] * len(outputs)
    for k, o in _float_outputs(outputs):
        fouts[k] = o
    if not any(o is not None for o in fouts):
        return _fail("gradcheck: the function returned no floating point tensor", raise_exception)

    analytical = _analytical_jacobian(fouts, diff, raise_exception)
    numerical = _numerical_jacobian(func, inputs, diff, len(fouts), eps)
    for a, (i, _x) in enumerate(diff):
        for k, o in enumerate(fouts):
            if o is None:
                continue
            num, ana = numerical[a][k], analytical[a][k]
            if not o.requires_grad:
                if num is not None and num.size and not np.allclose(num, 0.0, rtol=rtol, atol=atol):
                    return _fail(f"Numerical gradient for function expected to be zero for output {k} with "
                                 f"respect to input {i}", raise_exception)
                continue
            if num.shape != ana.shape or not np.all(np.abs(ana - num) <= atol + rtol * np.abs(num)):
                with np.printoptions(precision=4, suppress=True, linewidth=120):
                    msg = (f"Jacobian mismatch for output {k} with respect to input {i},\n"
                           f"numerical:{num}\nanalytical:{ana}\n")
                return _fail(msg, raise_exception)
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True,
                  nondet_tol: float = 0.0, check_undefined_grad: bool = True, seed: int = 0, **unsupported) -> bool:
    """gradcheck of the gradients themselves (second derivatives): the
    function checked is (inputs, grad_outputs) -> autograd.grad(func(inputs),
    inputs, grad_outputs, create_graph=True)."""
    from . import grad as autograd_grad
    from .._tensor import from_numpy

    inputs = _as_tuple(inputs)
    n_in = len(inputs)
    outputs = _as_tuple(func(*inputs))
    diff_out = [o for _k, o in _float_outputs(outputs) if o.requires_grad]
    if grad_outputs is None:
        rng = np.random.default_rng(seed)
        grad_outputs = []
        for o in diff_out:
            arr = rng.standard_normal(tuple(o.shape))
            if gen_non_contig_grad_outputs and arr.ndim:
                arr = np.asfortranarray(arr)
            g = from_numpy(np.array(arr, dtype=np.float64)).to(o.dtype)
            grad_outputs.append(g.requires_grad_())
    grad_outputs = tuple(_as_tuple(grad_outputs))

    def new_func(*args):
        inp, gos = args[:n_in], args[n_in:]
        outs = [o for _k, o in _float_outputs(_as_tuple(func(*inp))) if o.requires_grad]
        xs = [t for _i, t in _diff_inputs(inp)]
        gs = autograd_grad(outs, xs, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(new_func, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol, **unsupported)
