"""Activations from ufunc formulas: leaky_relu, elu, gelu
(approximate 'none' / 'tanh'), mish, softplus, hardtanh, relu6 and the
backward operators PyTorch declares for them (leaky_relu_backward,
elu_backward, gelu_backward, softplus_backward, hardtanh_backward,
mish_backward), all `python_module: nn` (torchlet._C._nn, like torch._C._nn).

Against numpy (float64 references, always) and torch (when installed):
values and dtypes for float64/32/16/bfloat16, parameters, special values,
transposed / stepped / broadcast views, 0-dim, empty, out= and in-place,
Meta tensors, PyTorch's errors (integer inputs, gelu's approximate, hardtanh's
bool / unsigned checks, the in-place backward checks), and gradients through
autograd (first and second order) against the numpy derivatives."""
import math

import numpy as np
import pytest

import torchlet as tl
from torchlet import _rt

from ops_helpers import BF16, FLOATS, NAMES, needs_torch, np_of, tl_copy, torch

NN = tl._C._nn
_erf = np.vectorize(math.erf, otypes=[np.float64])
S2 = math.sqrt(2.0)
KB, KK = math.sqrt(2.0 / math.pi), 0.044715


def sig(x):
    return 1 / (1 + np.exp(-x))


def gelu_ref(x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(KB * (x + KK * x ** 3)))
    return 0.5 * x * (1 + _erf(x / S2))


def gelu_grad_ref(g, x, approximate="none"):
    if approximate == "tanh":
        t = np.tanh(KB * (x + KK * x ** 3))
        return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * KB * (1 + 3 * KK * x * x))
    return g * (0.5 * (1 + _erf(x / S2)) + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi))


def softplus_ref(x, beta=1.0, threshold=20.0):
    with np.errstate(over="ignore"):
        return np.where(x * beta > threshold, x, np.log1p(np.exp(x * beta)) / beta)


def mish_grad_ref(g, x):
    tsp = np.tanh(softplus_ref(x))
    return g * (tsp + x * sig(x) * (1 - tsp * tsp))


def hardtanh_ref(x, lo=-1.0, hi=1.0):
    return np.where(np.isnan(x), x, np.minimum(np.maximum(x, lo), hi))


# name -> (torchlet call, numpy reference, torch call or None): x is a tensor / array
FORWARD = {
    "leaky_relu": (lambda x: NN.leaky_relu(x), lambda x: np.where(x > 0, x, x * 0.01), "leaky_relu", ()),
    "leaky_relu_0.3": (lambda x: NN.leaky_relu(x, 0.3), lambda x: np.where(x > 0, x, x * 0.3), "leaky_relu", (0.3,)),
    "elu": (lambda x: NN.elu(x), lambda x: np.where(x <= 0, np.expm1(x), x), "elu", ()),
    "elu_params": (lambda x: NN.elu(x, 0.5, 1.5, 2.0), lambda x: np.where(x <= 0, np.expm1(2 * x) * 0.75, 1.5 * x),
                   "elu", (0.5, 1.5, 2.0)),
    "gelu": (lambda x: NN.gelu(x), gelu_ref, "gelu", ()),
    "gelu_tanh": (lambda x: NN.gelu(x, approximate="tanh"), lambda x: gelu_ref(x, "tanh"), "gelu", "tanh"),
    "mish": (lambda x: NN.mish(x), lambda x: x * np.tanh(softplus_ref(x)), "mish", ()),
    "softplus": (lambda x: NN.softplus(x), softplus_ref, "softplus", ()),
    "softplus_params": (lambda x: NN.softplus(x, 2, 3), lambda x: softplus_ref(x, 2.0, 3.0), "softplus", (2, 3)),
    "hardtanh": (lambda x: NN.hardtanh(x), hardtanh_ref, "hardtanh", ()),
    "hardtanh_params": (lambda x: NN.hardtanh(x, -0.5, 2.5), lambda x: hardtanh_ref(x, -0.5, 2.5), "hardtanh",
                        (-0.5, 2.5)),
    "relu6": (lambda x: NN.relu6(x), lambda x: hardtanh_ref(x, 0.0, 6.0), "relu6", ()),
}
NPT = {tl.float16: np.float16, tl.float32: np.float32, tl.float64: np.float64}
TOL = {tl.float16: 2e-3, tl.bfloat16: 1.6e-2, tl.float32: 2e-6, tl.float64: 1e-12}


def torch_call(name, t):
    _, _, op, extra = FORWARD[name]
    if extra == "tanh":
        return getattr(torch._C._nn, op)(t, approximate="tanh")
    return getattr(torch._C._nn, op)(t, *extra)


def data(rng, shape, scale=3.0):
    return rng.standard_normal(shape) * scale


T = tl_copy


def stored(a, dt):
    """the values a holds once stored in dt, as float64"""
    if dt is tl.bfloat16:
        return np.asarray(a, np.float32).astype(BF16).astype(np.float64) if BF16 is not None else None
    return np.asarray(a).astype(NPT[dt]).astype(np.float64)


def N(t):
    return np_of(t).astype(np.float64)


def close(got, want, dt, scale=1.0):
    tol = TOL[dt] * scale
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(N(got), want, rtol=tol, atol=tol, equal_nan=True)


# ----------------------------------------------------------- forward vs numpy
@pytest.mark.parametrize("name", sorted(FORWARD))
@pytest.mark.parametrize("dt", FLOATS, ids=lambda d: NAMES[d])
def test_forward_vs_numpy(cpu_capability, name, dt):
    if dt is tl.bfloat16 and BF16 is None:
        pytest.skip("ml_dtypes not installed")
    f, ref, _, _ = FORWARD[name]
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    a = stored(data(rng, (3, 1031)), dt)   # longer than the float16 chunk, odd length
    x = T(a, dt)
    r = f(x)
    assert r.dtype is dt and tuple(r.shape) == (3, 1031)
    # float16 / bfloat16 compute in float and round once: within an ulp of the storage type
    close(r, stored(ref(a), dt) if dt in (tl.float16, tl.bfloat16) else ref(a), dt, 2.0)
    # non-contiguous, broadcast, 0-dim, empty
    close(f(_rt.transpose(x, 0, 1)), N(r).T, dt)
    close(f(_rt.slice(x, 1, 1, 1031, 7)), N(r)[:, 1::7], dt)
    close(f(_rt.expand(_rt.slice(x, 0, 0, 1, 1), [4, 1031])), np.broadcast_to(N(r)[:1], (4, 1031)), dt)
    z = f(_rt.select(_rt.select(x, 0, 2), 0, 5))
    assert tuple(z.shape) == ()
    close(z, N(r)[2, 5], dt)
    assert tuple(f(_rt.slice(x, 0, 0, 0, 1)).shape) == (0, 1031)


@pytest.mark.parametrize("name", sorted(FORWARD))
def test_special_values(name):
    f, ref, _, _ = FORWARD[name]
    vals = np.array([0.0, -0.0, 1e-30, -1e-30, 5.0, -5.0, 30.0, -30.0, 100.0, -100.0, np.inf, -np.inf, np.nan])
    for dt in (tl.float32, tl.float64):
        got = N(f(T(vals, dt)))
        with np.errstate(all="ignore"):
            near(got, ref(vals), vals, TOL[dt] * 4)
        if torch is not None:
            want = torch_call(name, torch.from_numpy(vals.astype(NPT[dt]))).double().numpy()
            # torch's vectorized float32 erf makes gelu(+inf) NaN; here it is +inf (as in float64)
            keep = ~np.isposinf(vals) if (name == "gelu" and dt is tl.float32) else np.ones(len(vals), bool)
            near(got[keep], want[keep], vals[keep], TOL[dt] * 4)


def near(got, want, x, tol):
    """within tol relative to |want| + |x|: formulas such as x * Phi(x) lose the
    digits of a tiny result to cancellation (torch's float32 gelu(-5) does too)"""
    both_nan = np.isnan(got) & np.isnan(want)
    exact = got == want
    with np.errstate(all="ignore"):
        ok = np.abs(got - want) <= tol * (np.abs(want) + np.abs(x))
    bad = ~(both_nan | exact | ok)
    assert not bad.any(), (x[bad], got[bad], want[bad])


@needs_torch
@pytest.mark.parametrize("name", sorted(FORWARD))
@pytest.mark.parametrize("dt", FLOATS, ids=lambda d: NAMES[d])
def test_forward_vs_torch(cpu_capability, name, dt):
    f = FORWARD[name][0]
    rng = np.random.default_rng(5)
    a = data(rng, (37, 29)).astype(np.float32)
    x, t = T(a, dt), torch.from_numpy(a).to(getattr(torch, NAMES[dt]))
    r, w = f(x), torch_call(name, t)
    assert NAMES[r.dtype] == str(w.dtype).split(".")[-1]
    close(r, w.double().numpy(), dt, 2.0)
    close(f(_rt.transpose(x, 0, 1)), torch_call(name, t.T).double().numpy(), dt, 2.0)


# ----------------------------------------------------------- out=, in-place, dtype rules
INPLACE = {"leaky_relu": lambda x: NN.leaky_relu_(x, 0.2), "elu": lambda x: NN.elu_(x, 0.7),
           "gelu": lambda x: NN.gelu_(x, approximate="tanh"), "mish": lambda x: NN.mish_(x),
           "hardtanh": lambda x: NN.hardtanh_(x, -0.5, 0.5), "relu6": lambda x: NN.relu6_(x)}
INPLACE_REF = {"leaky_relu": lambda a: np.where(a > 0, a, 0.2 * a), "elu": lambda a: np.where(a <= 0, 0.7 * np.expm1(a), a),
               "gelu": lambda a: gelu_ref(a, "tanh"), "mish": lambda a: a * np.tanh(softplus_ref(a)),
               "hardtanh": lambda a: hardtanh_ref(a, -0.5, 0.5), "relu6": lambda a: hardtanh_ref(a, 0, 6)}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace(name):
    a = data(np.random.default_rng(6), (4, 5)) * 3
    x = T(a, tl.float64)
    v0 = x._version
    assert INPLACE[name](x) is x
    assert x._version > v0
    close(x, INPLACE_REF[name](a), tl.float64)
    # in-place on a transposed view writes through
    base = T(a, tl.float64)
    INPLACE[name](_rt.transpose(base, 0, 1))
    close(base, INPLACE_REF[name](a), tl.float64)


@pytest.mark.parametrize("name", ["leaky_relu", "elu", "gelu", "mish", "softplus", "hardtanh"])
def test_out_and_dtype_rules(name):
    f = FORWARD[name][0]
    a = data(np.random.default_rng(7), (3, 4))
    x = T(a, tl.float32)
    fn = getattr(NN, name)
    out = _rt.empty(3, 4)
    assert fn(x, out=out) is out
    close(out, N(f(x)), tl.float32)
    # unary_op config: every operand must have the input's dtype
    with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
        fn(x, out=_rt.empty(3, 4, dtype=tl.float64))
    if torch is not None:
        with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
            getattr(torch._C._nn, name)(torch.zeros(3, 4), out=torch.empty(3, 4, dtype=torch.float64))


@pytest.mark.parametrize("name", ["leaky_relu", "elu", "gelu", "mish", "softplus"])
@pytest.mark.parametrize("dt", [tl.int64, tl.int32, tl.uint8, tl.bool], ids=lambda d: NAMES[d])
def test_integer_inputs_refused(name, dt):
    kernel = {"gelu": "GeluKernelImpl"}.get(name, name + "_cpu")
    x = T(np.array([1, 0, 1]), dt)
    with pytest.raises(NotImplementedError, match=f'"{kernel}" not implemented for \'{_pt_name(dt)}\''):
        getattr(NN, name)(x)
    if torch is not None:
        with pytest.raises(NotImplementedError, match=f'"{kernel}" not implemented for \'{_pt_name(dt)}\''):
            getattr(torch._C._nn, name)(torch.tensor([1, 0, 1]).to(getattr(torch, NAMES[dt])))


def _pt_name(dt):
    return {tl.int64: "Long", tl.int32: "Int", tl.uint8: "Byte", tl.bool: "Bool", tl.float32: "Float"}[dt]


def test_gelu_approximate_error():
    x = T(np.array([1.0, -1.0]), tl.float32)
    for bad in ("foo", "Tanh", ""):
        with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh."):
            NN.gelu(x, approximate=bad)
        with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh."):
            NN.gelu_backward(x, x, approximate=bad)
    if torch is not None:
        with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh."):
            torch._C._nn.gelu(torch.zeros(2), approximate="foo")
    with pytest.raises(TypeError):
        NN.gelu(x, "tanh")   # keyword-only, as in PyTorch


def test_hardtanh_integers_and_errors():
    a = np.array([-5, -1, 0, 1, 2, 3, 100], np.int64)
    for dt, npdt in ((tl.int64, np.int64), (tl.int32, np.int32), (tl.int8, np.int8), (tl.int16, np.int16)):
        r = NN.hardtanh(T(a, dt), 0.5, 2.5)   # integer bounds: 0 and 2
        assert r.dtype is dt
        np.testing.assert_array_equal(r.numpy(), np.clip(a, 0, 2).astype(npdt))
        np.testing.assert_array_equal(NN.relu6(T(a, dt)).numpy(), np.clip(a, 0, 6).astype(npdt))
        if torch is not None:
            np.testing.assert_array_equal(
                r.numpy(), torch._C._nn.hardtanh(torch.from_numpy(a).to(getattr(torch, NAMES[dt])), 0.5, 2.5).numpy())
    u = T(np.array([0, 5, 200], np.uint8), tl.uint8)
    np.testing.assert_array_equal(NN.hardtanh(u, 1, 100).numpy(), [1, 5, 100])
    with pytest.raises(RuntimeError, match="cannot do hardtanh on an unsigned type with negative limits"):
        NN.hardtanh(u)
    with pytest.raises(RuntimeError, match="Bool inputs not supported for hardtanh"):
        NN.hardtanh(T(np.array([True]), tl.bool))
    # integer bounds must fit: first int64 (hardtanh's toLong), then the tensor's type (clamp's)
    for dt, lo, hi, cname in ((tl.int8, 0, 300, "int8_t"), (tl.int16, -1e10, 1, "int16_t"),
                              (tl.int32, 0, 2**40, "int"), (tl.uint8, 0, 300, "uint8_t"),
                              (tl.int64, -1e30, 1, "int64_t"), (tl.int8, 0, 1e20, "int64_t")):
        with pytest.raises(RuntimeError, match=f"value cannot be converted to type {cname} without overflow"):
            NN.hardtanh(T(np.array([1]), dt), lo, hi)
        if torch is not None:
            with pytest.raises(RuntimeError, match=f"value cannot be converted to type {cname} without overflow"):
                torch._C._nn.hardtanh(torch.tensor([1]).to(getattr(torch, NAMES[dt])), lo, hi)
    np.testing.assert_array_equal(NN.hardtanh(T(np.array([5, -5]), tl.int64), -1e10, 1e10).numpy(), [5, -5])
    # min_val > max_val: every element becomes max_val (clamp's order), NaN stays
    r = NN.hardtanh(T(np.array([-3.0, 0.0, 3.0, np.nan]), tl.float32), 2.0, 1.0)
    np.testing.assert_array_equal(r.numpy()[:3], [1.0, 1.0, 1.0])
    assert np.isnan(r.numpy()[3])
    if torch is not None:
        with pytest.raises(RuntimeError, match="cannot do hardtanh on an unsigned type with negative limits"):
            torch._C._nn.hardtanh(torch.tensor([1], dtype=torch.uint8))


def test_meta():
    m = _rt.empty(2, 3, device="meta")
    for name in ("leaky_relu", "elu", "gelu", "mish", "softplus", "hardtanh", "relu6"):
        r = getattr(NN, name)(m)
        assert str(r.device) == "meta" and tuple(r.shape) == (2, 3) and r.dtype is tl.float32
    r = NN.gelu_backward(_rt.empty(2, 1, dtype=tl.float64, device="meta"), m)
    assert tuple(r.shape) == (2, 3) and r.dtype is tl.float64


# ----------------------------------------------------------- backward operators
def backward_cases():
    return {
        "leaky_relu_backward": (lambda g, x: NN.leaky_relu_backward(g, x, 0.1, False),
                                lambda g, x: np.where(x > 0, g, 0.1 * g),
                                lambda g, x: torch.ops.aten.leaky_relu_backward(g, x, 0.1, False)),
        "elu_backward": (lambda g, x: NN.elu_backward(g, 0.5, 1.5, 2.0, False, x),
                         lambda g, x: np.where(x <= 0, g * 2.0 * 0.75 * np.exp(2.0 * x), 1.5 * g),
                         lambda g, x: torch.ops.aten.elu_backward(g, 0.5, 1.5, 2.0, False, x)),
        "elu_backward_result": (lambda g, y: NN.elu_backward(g, 0.5, 1.5, 2.0, True, y),
                                lambda g, y: np.where(y <= 0, g * 2.0 * (y + 0.75), 1.5 * g),
                                lambda g, y: torch.ops.aten.elu_backward(g, 0.5, 1.5, 2.0, True, y)),
        "gelu_backward": (lambda g, x: NN.gelu_backward(g, x), gelu_grad_ref,
                          lambda g, x: torch.ops.aten.gelu_backward(g, x)),
        "gelu_backward_tanh": (lambda g, x: NN.gelu_backward(g, x, approximate="tanh"),
                               lambda g, x: gelu_grad_ref(g, x, "tanh"),
                               lambda g, x: torch.ops.aten.gelu_backward(g, x, approximate="tanh")),
        "softplus_backward": (lambda g, x: NN.softplus_backward(g, x, 2, 3),
                              lambda g, x: np.where(2 * x > 3, g, g * sig(2 * x)),
                              lambda g, x: torch.ops.aten.softplus_backward(g, x, 2, 3)),
        "hardtanh_backward": (lambda g, x: NN.hardtanh_backward(g, x, -0.5, 1.0),
                              lambda g, x: np.where((x <= -0.5) | (x >= 1.0), 0.0, g),
                              lambda g, x: torch.ops.aten.hardtanh_backward(g, x, -0.5, 1.0)),
        "mish_backward": (lambda g, x: NN.mish_backward(g, x), mish_grad_ref,
                          lambda g, x: torch.ops.aten.mish_backward(g, x)),
    }


@pytest.mark.parametrize("name", sorted(backward_cases()))
def test_backward_ops(cpu_capability, name):
    f, ref, tf = backward_cases()[name]
    rng = np.random.default_rng(8)
    x, g = data(rng, (5, 33)), data(rng, (5, 33), 1.0)
    x[0, :3] = [-0.5, 1.0, 0.0]   # hardtanh's bounds are excluded
    for dt in (tl.float64, tl.float32):
        r = f(T(g, dt), T(x, dt))
        assert r.dtype is dt
        close(r, ref(stored(g, dt), stored(x, dt)), dt, 4.0)
        if torch is not None:
            close(r, tf(torch.from_numpy(g.astype(NPT[dt])), torch.from_numpy(x.astype(NPT[dt]))).double().numpy(),
                  dt, 4.0)
    # broadcast gradient, promotion (float32 grad, float64 input -> float64)
    r = f(T(g[:1], tl.float32), T(x, tl.float64))
    assert r.dtype is tl.float64 and tuple(r.shape) == (5, 33)
    close(r, ref(np.broadcast_to(stored(g[:1], tl.float32), (5, 33)), x), tl.float32, 4.0)


def test_backward_op_errors():
    x = T(np.array([1.0, -1.0]), tl.float32)
    with pytest.raises(RuntimeError, match="In-place leakyReLu backward calculation is triggered with a negative slope"):
        NN.leaky_relu_backward(x, x, -0.1, True)
    with pytest.raises(RuntimeError, match="In-place elu backward calculation is triggered with a negative slope"):
        NN.elu_backward(x, -1.0, 1.0, 1.0, True, x)
    i = T(np.array([1, 2]), tl.int64)
    for fn, kernel in ((lambda: NN.leaky_relu_backward(i, i, 0.1, False), "leaky_relu_backward_cpu"),
                       (lambda: NN.gelu_backward(i, i), "GeluBackwardKernelImpl"),
                       (lambda: NN.softplus_backward(i, i, 1, 20), "softplus_backward_cpu"),
                       (lambda: NN.elu_backward(i, 1, 1, 1, False, i), "elu_backward_cpu"),
                       (lambda: NN.hardtanh_backward(i, i, -1, 1), "hardshrink_backward_cpu")):
        with pytest.raises(NotImplementedError, match=f'"{kernel}" not implemented for \'Long\''):
            fn()


# ----------------------------------------------------------- gradients through autograd
GRADS = {
    "leaky_relu": (lambda x: NN.leaky_relu(x, 0.2), lambda x: np.where(x > 0, 1.0, 0.2)),
    "elu": (lambda x: NN.elu(x, 0.5, 1.5, 2.0), lambda x: np.where(x <= 0, 1.5 * np.exp(2 * x), 1.5)),
    "gelu": (lambda x: NN.gelu(x), lambda x: gelu_grad_ref(1.0, x)),
    "gelu_tanh": (lambda x: NN.gelu(x, approximate="tanh"), lambda x: gelu_grad_ref(1.0, x, "tanh")),
    "mish": (lambda x: NN.mish(x), lambda x: mish_grad_ref(1.0, x)),
    "softplus": (lambda x: NN.softplus(x, 2, 3), lambda x: np.where(2 * x > 3, 1.0, sig(2 * x))),
    "hardtanh": (lambda x: NN.hardtanh(x, -0.5, 1.0), lambda x: np.where((x <= -0.5) | (x >= 1.0), 0.0, 1.0)),
    "relu6": (lambda x: NN.relu6(x), lambda x: np.where((x <= 0) | (x >= 6), 0.0, 1.0)),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradient(name):
    f, d = GRADS[name]
    a = data(np.random.default_rng(9), (4, 6)) * 2
    x = T(a, tl.float64).requires_grad_()
    y = f(x)
    y.sum().backward()
    np.testing.assert_allclose(N(x.grad), d(a), rtol=1e-10, atol=1e-12)
    if torch is not None:
        tx = torch.from_numpy(a).requires_grad_()
        fn = {"gelu_tanh": lambda t: torch.nn.functional.gelu(t, approximate="tanh"),
              "leaky_relu": lambda t: torch.nn.functional.leaky_relu(t, 0.2),
              "elu": lambda t: torch._C._nn.elu(t, 0.5, 1.5, 2.0),
              "softplus": lambda t: torch.nn.functional.softplus(t, 2, 3),
              "hardtanh": lambda t: torch.nn.functional.hardtanh(t, -0.5, 1.0)}.get(
                  name, lambda t: getattr(torch.nn.functional, name)(t))
        fn(tx).sum().backward()
        np.testing.assert_allclose(N(x.grad), tx.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_inplace_gradients_use_the_result():
    """leaky_relu_ / elu_ differentiate through their result (PyTorch's entries)"""
    a = data(np.random.default_rng(10), (3, 4))
    for fn, d in ((lambda x: NN.leaky_relu_(x, 0.2), np.where(a > 0, 1.0, 0.2)),
                  (lambda x: NN.elu_(x, 0.5), np.where(a <= 0, 0.5 * np.exp(a), 1.0))):
        leaf = T(a, tl.float64).requires_grad_()
        y = leaf * 1.0
        fn(y)
        y.sum().backward()
        np.testing.assert_allclose(N(leaf.grad), d, rtol=1e-12)
    # a negative slope cannot be inverted from the result: backward refuses (PyTorch's error)
    leaf = T(a, tl.float64).requires_grad_()
    y = leaf * 1.0
    NN.leaky_relu_(y, -0.2)
    with pytest.raises(RuntimeError, match="In-place leakyReLu backward calculation"):
        y.sum().backward()


@pytest.mark.parametrize("name", ["gelu", "gelu_tanh", "elu", "softplus", "mish", "leaky_relu", "hardtanh"])
def test_second_derivative(name):
    """d/dx of the first derivative (create_graph) against central differences of it"""
    f, d = GRADS[name]
    a = data(np.random.default_rng(11), (7,)) + 0.013
    x = T(a, tl.float64).requires_grad_()
    (gx,) = tl.autograd.grad(f(x).sum(), [x], create_graph=True)
    close(gx, d(a), tl.float64, 1e3)
    gx.sum().backward()
    h = 1e-5
    num = (d(a + h) - d(a - h)) / (2 * h)
    np.testing.assert_allclose(N(x.grad), num, rtol=1e-5, atol=1e-6)
