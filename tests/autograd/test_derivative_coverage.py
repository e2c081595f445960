"""Autograd coverage against PyTorch 2.13.

Two checks (docs/AUTOGRAD.md, "Coverage against PyTorch"):

* static: every operator of yaml/native_functions.yaml is classified twice,
  by torchlet's generator rules (its own derivatives.yaml entry, its group's,
  an autogen'd functional variant's mutable entry, NotImplemented, composite,
  not differentiable) and by PyTorch's (its derivatives.yaml, read from the
  installed torchgen or /work/shared/reference, with find_info's three
  matching rules); the operators where the two disagree must be exactly the
  documented ones, and every shared node name must be PyTorch's;
* dynamic: ~110 operators run on random float64 inputs in torchlet and torch:
  the grad_fn name (or none), then the gradients of a weighted sum (or the
  error type when the backward fails) must agree.

The formulas that close the gap to PyTorch's coverage (native_dropout_backward,
the functional _index_put_impl, _unsafe_view) are also compared with torch
directly, including second derivatives.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from _gradcheck_util import gradcheck, gradgradcheck

torchlet = pytest.importorskip("torchlet")
if not hasattr(torchlet._lib, "tl_autograd_register_all"):
    pytest.skip("torchlet built without generated autograd", allow_module_level=True)

try:
    if os.environ.get("TORCHLET_ASAN_RUN") == "1":  # torch's C++ exceptions abort under ASan's preload
        raise ImportError
    import torch
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

REPO = Path(__file__).resolve().parents[2]


# ------------------------------------------------------------ static check

def _pytorch_yaml_dir() -> tuple[Path, Path] | None:
    """PyTorch 2.13's native_functions.yaml / derivatives.yaml: the installed
    torchgen's packaged copies, or the project's shared reference."""
    cands = []
    try:
        import torchgen

        base = Path(torchgen.__file__).parent / "packaged"
        cands.append((base / "ATen/native", base / "autograd"))
    except ImportError:
        pass
    ref = Path("/work/shared/reference/pytorch-2.13")
    cands.append((ref, ref))
    for nf, dv in cands:
        if (nf / "native_functions.yaml").is_file() and (dv / "derivatives.yaml").is_file():
            return nf, dv
    return None


def _torchlet_status(m, f) -> str:
    """what torchlet's generator gives f (codegen/emit/c_autograd.py's _kernel rules)"""
    from codegen import api_c
    from codegen.emit.c_autograd import DONT_REQUIRE_DERIVATIVE

    if not any(a.is_tensor for a in api_c.c_args(f)):
        return "factory"
    if f.func.is_out_fn():
        return "out"
    if "CompositeImplicitAutograd" in m.kernels(f):
        return "composite"
    e = m.autograd_of(f)
    info = e.default if e is not None else None
    if info is None or info.op is None:
        if f.func.name.name.base in DONT_REQUIRE_DERIVATIVE or api_c.c_return(f).kind not in ("tensor", "tensors", "tensor_list"):
            return "not differentiable"
        od = e.output_differentiability if e is not None else None
        if od and not any(x is True for x in od):
            return "not differentiable"
        return "NotImplemented"
    if all(d.text.startswith("not_implemented(") for d in info.derivatives):
        return "formula raises"
    return "formula " + info.op


# the part of PyTorch's DONT_REQUIRE_DERIVATIVE (gen_variable_type.py) that
# torchlet declares: no autograd kernel, outputs never require grad
PT_DONT_REQUIRE_DERIVATIVE = {"empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like",
                              "randint_like", "isnan", "result_type"}


def _pytorch_status(m, f, by_sig) -> str:
    """what PyTorch 2.13's autograd codegen gives f (gen_variable_type /
    load_derivatives' find_info: the exact entry; else the functional entry of
    the same signature; else, for an autogen'd variant, the mutable one's)"""
    exact, functional, mutable = by_sig
    if f.func.is_out_fn():
        return "out"
    if "CompositeImplicitAutograd" in m.kernels(f):
        return "composite"
    d = exact.get(str(f.func.name))
    if d is None:
        sig = str(f.func.signature())
        d = functional.get(sig)
        if d is None and f.generated_from is not None:
            d = mutable.get(sig)
    if d is None:
        if f.func.name.name.base in PT_DONT_REQUIRE_DERIVATIVE:
            return "not differentiable"
        return "NotImplemented"  # the fallback (bool / integer outputs never get it)
    info = d.default
    if info is None or info.op is None:
        return "not differentiable"
    if all(x.text.startswith("not_implemented(") for x in info.derivatives):
        return "formula raises"
    return "formula " + info.op


# torchlet operators whose autograd is not PyTorch's, each with the reason
# (docs/AUTOGRAD.md, "Coverage against PyTorch"). Bool / integer results
# (comparisons, bitwise, logical_*, argmax, isinf ...) are left out: neither
# library records anything for them.
KNOWN_STATIC = {
    # PyTorch's math_silu_backward is CompositeImplicitAutograd (differentiated
    # through its decomposition); torchlet keeps its fused kernel and writes
    # the same derivative out as an entry (SiluBackwardBackward0)
    "silu_backward": ("formula SiluBackwardBackward0", "composite"),
    # PyTorch differentiates both with their own entries; here they are
    # CompositeImplicitAutograd (docs/NN.md: operators under grad
    # mode, the fused kernel otherwise), so they differentiate through their
    # decomposition: same values, other node names
    "native_layer_norm_backward": ("composite", "formula NativeLayerNormBackwardBackward0"),
    "mse_loss_backward": ("composite", "formula MseLossBackwardBackward0"),
    # copy_: PyTorch's is hand-written (VariableTypeManual); here an entry whose
    # node says PyTorch's name (torch::autograd::CopyBackwards, c_autograd_nodes.MANUAL_NODE_NAMES)
    "copy_": ("formula CopyBackward0", "NotImplemented"),
    # both differentiate group norm twice through
    # infinitely_differentiable_native_group_norm_backward (grad mode); torchlet
    # also gives native_group_norm_backward, called directly, an entry (docs/NN.md)
    "native_group_norm_backward": ("formula NativeGroupNormBackwardBackward0", "NotImplemented"),
    # they return nothing (they write their out arguments): nothing is recorded in either library
    "_cummax_helper": ("not differentiable", "NotImplemented"),
    "_cummin_helper": ("not differentiable", "NotImplemented"),
}
# torchgen adds the derivatives of every {view}_copy operator from its view's
# entry (node AliasBackward0_copy); this test reads PyTorch's derivatives.yaml,
# which has none, while torchlet's lists them (same formulas, same node names)
KNOWN_STATIC.update({n: (f"formula {node}", "NotImplemented") for n, node in {
    "alias_copy": "AliasBackward0_copy", "as_strided_copy": "AsStridedBackward0_copy",
    "diagonal_copy": "DiagonalBackward0_copy", "expand_copy": "ExpandBackward0_copy",
    "permute_copy": "PermuteBackward0_copy", "split_with_sizes_copy": "SplitWithSizesBackward0_copy",
    "squeeze_copy": "SqueezeBackward0_copy", "squeeze_copy.dim": "SqueezeBackward1_copy",
    "squeeze_copy.dims": "SqueezeBackward2_copy", "t_copy": "TBackward0_copy",
    "transpose_copy.int": "TransposeBackward0_copy", "unbind_copy.int": "UnbindBackward0_copy",
    "unsqueeze_copy": "UnsqueezeBackward0_copy", "view_copy": "ViewBackward0_copy"}.items()})


def _statuses():
    from codegen.model import Inputs, load_model

    d = _pytorch_yaml_dir()
    if d is None:
        pytest.skip("PyTorch's native_functions.yaml / derivatives.yaml not found (torchgen or the shared reference)")
    nf, dv = d
    tags = nf / "tags.yaml"
    pt = load_model(Inputs(str(nf / "native_functions.yaml"), str(dv / "derivatives.yaml"), str(tags) if tags.is_file() else None))
    tl = load_model(Inputs(str(REPO / "yaml/native_functions.yaml"), str(REPO / "yaml/derivatives.yaml")))
    exact, functional, mutable = {}, {}, {}
    for e in pt.derivatives:
        fn = e.function
        exact[str(fn.func.name)] = e
        (functional if fn.func.kind().name == "functional" else mutable)[str(fn.func.signature())] = e
    ptf = {str(f.func.name): f for f in pt.functions}
    out = {}
    for f in tl.functions:
        name = str(f.func.name)
        if name in ptf:
            out[name] = (_torchlet_status(tl, f), _pytorch_status(pt, ptf[name], (exact, functional, mutable)))
    return out


def _has_float_output(name: str) -> bool:
    """bool / integer results: no grad_fn in either library (the fallback sets
    history on floating outputs only)"""
    base = name.split(".")[0].rstrip("_")
    return not (base in {"argmax", "argmin", "isinf", "isnan", "isfinite", "isposinf", "isneginf", "signbit",
                         "nonzero", "count_nonzero", "all", "any", "allclose", "isclose", "equal"}
                or base.startswith(("bitwise_", "logical_", "eq", "ne", "lt", "le", "gt", "ge"))
                or name == "view.dtype")


def test_static_coverage_matches_pytorch():
    deviations = {}
    for name, (t, p) in _statuses().items():
        if t in ("factory", "out") or p == "out" or t == p:
            continue
        if t.startswith("formula ") and p.startswith("formula "):
            continue  # names: the next test
        if t == "NotImplemented" and p == "NotImplemented":
            continue
        if not _has_float_output(name):
            continue
        deviations[name] = (t, p)
    assert deviations == KNOWN_STATIC


def test_static_node_names_are_pytorchs():
    wrong = {n: (t, p) for n, (t, p) in _statuses().items()
             if t.startswith("formula ") and p.startswith("formula ") and t != p}  # fmt: skip
    assert wrong == {}


def test_no_differentiable_pytorch_entry_is_not_implemented_here():
    """the brief's list: operators PyTorch differentiates with a formula that
    torchlet leaves to the NotImplemented fallback: only the deviations
    KNOWN_STATIC documents"""
    left = {n: p for n, (t, p) in _statuses().items() if t == "NotImplemented" and p.startswith("formula ")}
    assert left == {n: p for n, (t, p) in KNOWN_STATIC.items() if t == "NotImplemented" and p.startswith("formula ")}


# ------------------------- dropout backward, _index_put_impl, _unsafe_view vs torch

def _pair(a, requires_grad=True):
    x = torchlet.tensor(np.array(a))
    x.requires_grad_(requires_grad)
    if torch is None:
        return x, None
    px = torch.tensor(np.array(a))
    px.requires_grad_(requires_grad)
    return x, px


def _np(t):
    return np.array(t.detach().numpy()) if hasattr(t, "detach") else np.asarray(t)


R5 = np.random.default_rng(5055)


@pytest.mark.parametrize("shape", [(3, 4), (7,), (), (0, 3), (2, 3, 5)])
@pytest.mark.parametrize("scale", [1.0 / 0.6, 0.0, 1.0])
def test_native_dropout_backward_against_numpy_and_torch(shape, scale):
    g0 = R5.standard_normal(shape)
    m0 = R5.random(shape) < 0.5
    w0 = R5.standard_normal(shape)
    g, pg = _pair(g0)
    r = torchlet.native_dropout_backward(g, torchlet.tensor(m0), scale)
    assert r.grad_fn.name() == "NativeDropoutBackwardBackward0"
    (gg,) = torchlet.autograd.grad((r * torchlet.tensor(w0)).sum(), [g], create_graph=True)
    np.testing.assert_allclose(_np(gg), w0 * m0 * scale, rtol=1e-15, atol=0)
    assert not gg.requires_grad  # linear in grad_output: nothing to record, as in torch
    if torch is not None:
        pr = torch.ops.aten.native_dropout_backward(pg, torch.tensor(m0), scale)
        assert r.grad_fn.name() == pr.grad_fn.name()
        (pgg,) = torch.autograd.grad((pr * torch.tensor(w0)).sum(), [pg])
        np.testing.assert_allclose(_np(gg), pgg.numpy(), rtol=1e-15, atol=0)


def test_native_dropout_backward_float32_mask_and_noncontiguous():
    g0 = R5.standard_normal((4, 3)).astype(np.float32)
    m0 = R5.random((3, 4)) < 0.5
    g, pg = _pair(g0)
    r = torchlet.native_dropout_backward(g.t(), torchlet.tensor(m0), 2.0)
    (gg,) = torchlet.autograd.grad(r.sum(), [g])
    np.testing.assert_allclose(_np(gg), (m0 * 2.0).T, rtol=1e-6)
    assert gg.dtype == torchlet.float32
    if torch is not None:
        pr = torch.ops.aten.native_dropout_backward(pg.t(), torch.tensor(m0), 2.0)
        (pgg,) = torch.autograd.grad(pr.sum(), [pg])
        np.testing.assert_allclose(_np(gg), pgg.numpy(), rtol=1e-6)


def test_native_dropout_double_backward_through_dropout():
    """the second derivative of native_dropout under create_graph goes through
    infinitely_differentiable_native_dropout_backward (recorded operators); its
    third, through native_dropout_backward's own formula when that op is recorded"""
    x0 = R5.standard_normal((4, 5))
    assert gradcheck(lambda g: torchlet.native_dropout_backward(g * g, torchlet.tensor(x0 > 0), 1.25), [x0])
    assert gradgradcheck(lambda g: torchlet.native_dropout_backward(g * g, torchlet.tensor(x0 > 0), 1.25), [x0])


@pytest.mark.parametrize("mdtype", [np.float64, np.float32, np.int64, np.uint8])
def test_native_dropout_backward_any_mask_dtype_and_mask_gradient(mdtype):
    """any mask dtype, promoted with grad_output (PyTorch's CPU kernel); a
    float mask that requires grad gets PyTorch's not_implemented formula"""
    g0, m0 = R5.standard_normal(5), (R5.random(5) < 0.5).astype(mdtype)
    g, pg = _pair(g0)
    m = torchlet.tensor(m0)
    r = torchlet.native_dropout_backward(g, m, 2.0)
    np.testing.assert_allclose(_np(r), g0 * m0 * 2.0, rtol=1e-15)
    if torch is not None:
        pr = torch.ops.aten.native_dropout_backward(pg, torch.tensor(m0), 2.0)
        assert str(r.dtype) == str(pr.dtype).replace("torch.", "torchlet.")
    if mdtype in (np.float64, np.float32):
        m.requires_grad_(True)
        r = torchlet.native_dropout_backward(g, m, 2.0)
        with pytest.raises(NotImplementedError) as e:
            r.sum().backward()
        assert str(e.value) == "the derivative for 'native_dropout_backward: mask' is not implemented."
        if torch is not None:
            pm = torch.tensor(m0, requires_grad=True)
            with pytest.raises(NotImplementedError) as pe:
                torch.ops.aten.native_dropout_backward(pg, pm, 2.0).sum().backward()
            assert str(e.value) == str(pe.value)


def _idx(L, a):
    return L.tensor(np.array(a, dtype=np.int64))


@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("case", ["rows", "cols_none", "two_dims", "broadcast_value", "transposed", "empty_index"])
def test_functional_index_put_impl_against_torch(case, accumulate):
    a0 = R5.standard_normal((4, 5))
    specs = {
        "rows": (lambda L: [_idx(L, [2, 0, 2])], (3, 5)),
        "cols_none": (lambda L: [None, _idx(L, [4, 1])], (4, 2)),
        "two_dims": (lambda L: [_idx(L, [1, 3, 1]), _idx(L, [0, 4, 0])], (3,)),
        "broadcast_value": (lambda L: [_idx(L, [3, 0])], ()),
        "transposed": (lambda L: [_idx(L, [1, 1])], (2, 4)),
        "empty_index": (lambda L: [_idx(L, [])], (0, 5)),
    }
    ix, vshape = specs[case]
    v0 = R5.standard_normal(vshape)
    w0 = R5.standard_normal((5, 4) if case == "transposed" else (4, 5))

    def run(L, f):
        a, v = (L.tensor(np.array(x)) for x in (a0, v0))
        a.requires_grad_(True)
        v.requires_grad_(True)
        base = a.t() if case == "transposed" else a
        r = f(base * 1.0 if case != "transposed" else base, ix(L), v, accumulate, False)
        name = r.grad_fn.name()
        (r * L.tensor(w0)).sum().backward()
        return name, _np(r), _np(a.grad), _np(v.grad)

    got = run(torchlet, torchlet._index_put_impl)
    assert got[0] == "IndexPutImplBackward0"
    # numpy reference of the gradients
    mask_hit = np.zeros(w0.shape, bool)
    if case != "transposed":
        idx = [None if i is None else i.numpy() for i in ix(torchlet)]
        key = tuple(slice(None) if i is None else i for i in idx)
    else:
        key = (np.array([1, 1]),)
    mask_hit[key] = True
    np.testing.assert_allclose(got[2].T if case == "transposed" else got[2],
                               w0 if accumulate else np.where(mask_hit, 0.0, w0), rtol=1e-15)  # fmt: skip
    np.testing.assert_allclose(got[3], np.broadcast_to(w0[key], np.broadcast_shapes(w0[key].shape, v0.shape)).reshape(-1, *v0.shape).sum(0)
                               if w0[key].shape != v0.shape else w0[key], rtol=1e-12)  # fmt: skip
    if torch is not None:
        want = run(torch, torch.ops.aten._index_put_impl)
        assert got[0] == want[0]
        for x, y in zip(got[1:], want[1:]):
            np.testing.assert_allclose(x, y, rtol=1e-12, atol=0)


def test_functional_index_put_impl_leaves_self_and_double_backward():
    a0, v0 = R5.standard_normal((4, 3)), R5.standard_normal((2, 3))
    a, _ = _pair(a0)
    r = torchlet._index_put_impl(a, [_idx(torchlet, [3, 0])], torchlet.tensor(v0), False)
    np.testing.assert_array_equal(_np(a), a0)  # functional: self is not written
    assert a.is_leaf and r.grad_fn.name() == "IndexPutImplBackward0"
    assert gradgradcheck(lambda x, v: torchlet._index_put_impl(x * x, [_idx(torchlet, [3, 0])], v * v, True), [a0, v0])


def test_functional_index_put_impl_errors_match_torch():
    a, pa = _pair(R5.standard_normal((4, 3)))
    with pytest.raises(IndexError) as e:
        torchlet._index_put_impl(a, [_idx(torchlet, [7])], torchlet.tensor(1.0), False)
    if torch is not None:
        with pytest.raises(IndexError) as pe:
            torch.ops.aten._index_put_impl(pa, [torch.tensor([7])], torch.tensor(1.0, dtype=torch.float64), False)
        assert str(e.value) == str(pe.value)


# ------------------------------------------------- dynamic: ~110 ops vs torch

RD = np.random.default_rng(5056)


def _u(*shape, lo=-2.0, hi=2.0):
    return ("u", shape, lo, hi)


def _p(*shape):
    return _u(*shape, lo=0.2, hi=0.8)  # (0, 1): logit, asin, atanh, log ...


def _make(spec):
    _, shape, lo, hi = spec
    return RD.uniform(lo, hi, shape)


def _F(L):
    return L.nn.functional


def _ix2(L, a):
    return L.tensor(np.array(a, dtype=np.int64))


def _mask(L):
    return L.tensor(np.array([[True, False, True], [False, True, True]]))


# name -> (input specs, fn(lib, *leaves)); each leaf requires grad (float64)
DYNAMIC = {
    # unary pointwise
    **{op: ([_p(2, 3)], lambda L, a, op=op: getattr(L, op)(a)) for op in
       ["abs", "acos", "asin", "atan", "cos", "cosh", "sin", "sinh", "tan", "tanh", "exp", "exp2", "expm1", "log",
        "log10", "log1p", "log2", "sqrt", "rsqrt", "reciprocal", "sigmoid", "erf", "erfc", "neg", "relu", "floor",
        "ceil", "trunc", "frac", "round", "sign", "logit", "asinh", "atanh", "nan_to_num", "isnan", "isfinite"]},
    "acosh": ([_u(2, 3, lo=1.2, hi=3.0)], lambda L, a: L.acosh(a)),
    "abs_t": ([_u(3, 2)], lambda L, a: L.abs(a.t())),
    "exp_": ([_u(2, 3)], lambda L, a: (a * 1).exp_()),
    "sigmoid_": ([_u(2, 3)], lambda L, a: (a * 1).sigmoid_()),
    "logit_eps": ([_u(4, lo=-0.2, hi=1.2)], lambda L, a: L.logit(a, 0.1)),
    "round_decimals": ([_u(4)], lambda L, a: L.round(a, decimals=1)),
    # binary / ternary pointwise
    "add": ([_u(2, 3), _u(3)], lambda L, a, b: L.add(a, b, alpha=2)),
    "add_scalar": ([_u(2, 3)], lambda L, a: a + 1.5),
    "radd": ([_u(2, 3)], lambda L, a: 1.5 + a),
    "sub": ([_u(2, 3), _u(2, 1)], lambda L, a, b: a - b),
    "rsub": ([_u(2, 3)], lambda L, a: 2 - a),
    "mul": ([_u(2, 3), _u(3)], lambda L, a, b: a * b),
    "mul_scalar": ([_u(2, 3)], lambda L, a: a * 3),
    "div": ([_u(2, 3), _u(3, lo=0.5, hi=2)], lambda L, a, b: a / b),
    "div_floor": ([_u(2, 3), _u(3, lo=0.5, hi=2)], lambda L, a, b: L.div(a, b, rounding_mode="floor")),
    "rdiv": ([_u(3, lo=0.5, hi=2)], lambda L, a: 2 / a),
    "pow": ([_u(2, 3, lo=0.5, hi=2), _u(3)], lambda L, a, b: L.pow(a, b)),
    "pow_scalar": ([_u(2, 3)], lambda L, a: a ** 2),
    "pow_scalar3": ([_u(2, 3)], lambda L, a: a ** 3),
    "rpow": ([_u(3)], lambda L, a: 2.0 ** a),
    "atan2": ([_u(2, 3), _u(3, lo=0.5, hi=2)], lambda L, a, b: L.atan2(a, b)),
    "maximum": ([_u(2, 3), _u(3)], lambda L, a, b: L.maximum(a, b)),
    "minimum": ([_u(2, 3), _u(3)], lambda L, a, b: L.minimum(a, b)),
    "fmod": ([_u(2, 3), _u(3, lo=0.5, hi=2)], lambda L, a, b: L.fmod(a, b)),
    "remainder": ([_u(2, 3), _u(3, lo=0.5, hi=2)], lambda L, a, b: L.remainder(a, b)),
    "floor_divide": ([_u(2, 3), _u(3, lo=0.5, hi=2)], lambda L, a, b: L.floor_divide(a, b)),
    "lerp": ([_u(2, 3), _u(3), _p(2, 3)], lambda L, a, b, w: L.lerp(a, b, w)),
    "lerp_scalar": ([_u(2, 3), _u(3)], lambda L, a, b: L.lerp(a, b, 0.3)),
    "addcmul": ([_u(2, 3), _u(3), _u(2, 1)], lambda L, a, b, c: L.addcmul(a, b, c, value=0.5)),
    "addcdiv": ([_u(2, 3), _u(3), _u(2, 1, lo=0.5, hi=2)], lambda L, a, b, c: L.addcdiv(a, b, c, value=0.5)),
    "where": ([_u(2, 3), _u(3)], lambda L, a, b: L.where(a > 0, a, b)),
    "clamp": ([_u(2, 3)], lambda L, a: L.clamp(a, -0.5, 0.5)),
    "clamp_tensor": ([_u(2, 3), _u(3, lo=-1, hi=-0.5), _u(3, lo=0.5, hi=1)], lambda L, a, lo, hi: L.clamp(a, lo, hi)),
    "clamp_min": ([_u(2, 3)], lambda L, a: L.clamp_min(a, 0.1)),
    "clamp_max": ([_u(2, 3)], lambda L, a: L.clamp_max(a, 0.1)),
    "eq": ([_u(2, 3), _u(3)], lambda L, a, b: L.eq(a, b)),
    "lt_": ([_u(2, 3), _u(3)], lambda L, a, b: (a * 1).lt_(b)),
    "ge_scalar_": ([_u(2, 3)], lambda L, a: (a * 1).ge_(0.0)),
    "logical_and": ([_u(2, 3), _u(3)], lambda L, a, b: L.logical_and(a, b)),
    # reductions
    "sum": ([_u(2, 3)], lambda L, a: a.sum()),
    "sum_dim": ([_u(2, 3, 4)], lambda L, a: a.sum((0, 2), keepdim=True)),
    "mean": ([_u(2, 3)], lambda L, a: a.mean()),
    "mean_dim": ([_u(2, 3)], lambda L, a: a.mean(1)),
    "prod": ([_u(2, 3, lo=0.5, hi=1.5)], lambda L, a: a.prod()),
    "prod_dim": ([_u(2, 3, lo=0.5, hi=1.5)], lambda L, a: a.prod(1)),
    "amax": ([_u(2, 3)], lambda L, a: L.amax(a, 1)),
    "amin": ([_u(2, 3)], lambda L, a: L.amin(a, 0)),
    "max": ([_u(2, 3)], lambda L, a: a.max()),
    "max_dim": ([_u(2, 3)], lambda L, a: L.max(a, 1)[0]),
    "min_dim": ([_u(2, 3)], lambda L, a: L.min(a, 0).values),
    "maxmin_binary": ([_u(2, 3), _u(3)], lambda L, a, b: L.max(a, b) + L.min(a, b)),
    "var": ([_u(2, 3)], lambda L, a: a.var(1)),
    "std": ([_u(2, 3)], lambda L, a: a.std()),
    "var_mean": ([_u(2, 3)], lambda L, a: L.var_mean(a, 1)[0]),
    "std_mean": ([_u(2, 3)], lambda L, a: L.std_mean(a, 0)[1]),
    "logsumexp": ([_u(2, 3)], lambda L, a: L.logsumexp(a, 1)),
    "norm": ([_u(2, 3)], lambda L, a: a.norm()),
    "vector_norm": ([_u(2, 3)], lambda L, a: L.linalg.vector_norm(a, 3, 1)),
    "cumsum": ([_u(2, 3)], lambda L, a: L.cumsum(a, 1)),
    "cumprod": ([_u(2, 3, lo=0.5, hi=1.5)], lambda L, a: L.cumprod(a, 0)),
    "argmax": ([_u(2, 3)], lambda L, a: L.argmax(a)),
    "all": ([_u(2, 3)], lambda L, a: L.all(a)),
    # linear algebra
    "mm": ([_u(2, 3), _u(3, 4)], lambda L, a, b: L.mm(a, b)),
    "bmm": ([_u(2, 2, 3), _u(2, 3, 2)], lambda L, a, b: L.bmm(a, b)),
    "addmm": ([_u(4), _u(2, 3), _u(3, 4)], lambda L, c, a, b: L.addmm(c, a, b, beta=0.5, alpha=2)),
    "baddbmm": ([_u(2, 2, 2), _u(2, 2, 3), _u(2, 3, 2)], lambda L, c, a, b: L.baddbmm(c, a, b)),
    "mv": ([_u(2, 3), _u(3)], lambda L, a, b: L.mv(a, b)),
    "dot": ([_u(3), _u(3)], lambda L, a, b: L.dot(a, b)),
    "matmul_2d": ([_u(2, 3), _u(3, 4)], lambda L, a, b: a @ b),
    "matmul_batched": ([_u(2, 2, 3), _u(3, 4)], lambda L, a, b: L.matmul(a, b)),
    "matmul_1d_2d": ([_u(3), _u(3, 2)], lambda L, a, b: L.matmul(a, b)),
    "matmul_1d": ([_u(3), _u(3)], lambda L, a, b: L.matmul(a, b)),
    "matmul_bmm": ([_u(2, 2, 3), _u(2, 3, 4)], lambda L, a, b: a @ b),
    "matmul_bmm_vector": ([_u(2, 2, 3), _u(3)], lambda L, a, b: a @ b.detach()),
    "matmul_2d_3d": ([_u(2, 2), _u(2, 2, 3)], lambda L, a, b: a @ b),
    "matmul_folded_plain_rhs": ([_u(2, 2, 3), _u(3, 4)], lambda L, a, b: a @ b.detach()),
    "outer": ([_u(3), _u(2)], lambda L, a, b: L.outer(a, b)),
    "linear": ([_u(2, 3), _u(4, 3), _u(4)], lambda L, x, w, b: _F(L).linear(x, w, b)),
    "linear_nobias": ([_u(2, 3), _u(4, 3)], lambda L, x, w: _F(L).linear(x, w)),
    "linear_3d": ([_u(2, 2, 3), _u(4, 3), _u(4)], lambda L, x, w, b: _F(L).linear(x, w, b)),
    "svdvals": ([_u(3, 2)], lambda L, a: L.linalg.svdvals(a)),
    "matrix_norm": ([_u(3, 2)], lambda L, a: L.linalg.matrix_norm(a)),
    # shape and indexing
    "cat": ([_u(2, 3), _u(1, 3)], lambda L, a, b: L.cat([a, b])),
    "stack": ([_u(2, 3), _u(2, 3)], lambda L, a, b: L.stack([a, b], 1)),
    "split": ([_u(5, 3)], lambda L, a: a.split(2)[1]),
    "chunk": ([_u(4, 3)], lambda L, a: a.chunk(2)[1]),
    "unbind": ([_u(2, 3)], lambda L, a: a.unbind(1)[2]),
    "flatten": ([_u(2, 3, 2)], lambda L, a: a.flatten()),
    "narrow": ([_u(4, 3)], lambda L, a: a.narrow(0, 1, 2)),
    "reshape_view": ([_u(2, 6)], lambda L, a: a.reshape(3, 4)),
    "reshape_copy": ([_u(3, 4)], lambda L, a: a.t().reshape(12)),
    "view": ([_u(2, 6)], lambda L, a: a.view(4, 3)),
    "t": ([_u(2, 3)], lambda L, a: a.t()),
    "transpose": ([_u(2, 3, 4)], lambda L, a: a.transpose(0, 2)),
    "permute": ([_u(2, 3, 4)], lambda L, a: a.permute(2, 0, 1)),
    "expand": ([_u(3, 1)], lambda L, a: a.expand(2, 3, 4)),
    "squeeze": ([_u(1, 3, 1)], lambda L, a: a.squeeze()),
    "squeeze_dim": ([_u(1, 3, 1)], lambda L, a: a.squeeze(0)),
    "unsqueeze": ([_u(2, 3)], lambda L, a: a.unsqueeze(1)),
    "select": ([_u(3, 4)], lambda L, a: a[1]),
    "slice": ([_u(5, 4)], lambda L, a: a[1:4:2]),
    "getitem_advanced": ([_u(4, 3)], lambda L, a: a[[0, 2, 2]]),
    "getitem_mask": ([_u(2, 3)], lambda L, a: a[_mask(L)]),
    "index_select": ([_u(4, 3)], lambda L, a: L.index_select(a, 0, _ix2(L, [3, 0, 3]))),
    "gather": ([_u(3, 4)], lambda L, a: L.gather(a, 1, _ix2(L, [[0, 0], [1, 3], [2, 2]]))),
    "scatter": ([_u(3, 4), _u(3, 2)], lambda L, a, s: L.scatter(a, 1, _ix2(L, [[0, 1], [1, 3], [2, 0]]), s)),
    "scatter_add": ([_u(3, 4), _u(3, 2)], lambda L, a, s: L.scatter_add(a, 1, _ix2(L, [[0, 0], [1, 3], [2, 2]]), s)),
    "index_add": ([_u(4, 3), _u(2, 3)], lambda L, a, s: a.index_add(0, _ix2(L, [1, 1]), s)),
    "index_put": ([_u(4, 3), _u(2, 3)], lambda L, a, v: a.index_put((_ix2(L, [1, 3]),), v)),
    "setitem": ([_u(4, 3), _u(3)], lambda L, a, v: _setitem(a * 1, v)),
    "masked_fill": ([_u(2, 3)], lambda L, a: a.masked_fill(_mask(L), 0.5)),
    "tril": ([_u(3, 3)], lambda L, a: L.tril(a)),
    "triu": ([_u(3, 3)], lambda L, a: L.triu(a, 1)),
    "flip": ([_u(2, 3)], lambda L, a: L.flip(a, (0,))),
    "hstack": ([_u(2, 3), _u(2, 1)], lambda L, a, b: L.hstack([a, b])),
    "vstack": ([_u(2, 3), _u(3)], lambda L, a, b: L.vstack([a, b])),
    "unflatten": ([_u(2, 6)], lambda L, a: a.unflatten(1, (2, 3))),
    "clone": ([_u(2, 3)], lambda L, a: a.clone()),
    "contiguous": ([_u(3, 2)], lambda L, a: a.t().contiguous()),
    "to_float32": ([_u(2, 3)], lambda L, a: a.to(L.float32)),
    "as_strided": ([_u(6)], lambda L, a: L.as_strided(a, (2, 2), (1, 2))),
    "detach": ([_u(2, 3)], lambda L, a: a.detach()),
    "zeros_like": ([_u(2, 3)], lambda L, a: L.zeros_like(a)),
    "fill_": ([_u(2, 3)], lambda L, a: (a * 1).fill_(2.0)),
    "zero_": ([_u(2, 3)], lambda L, a: (a * 1).zero_()),
    "copy_": ([_u(2, 3), _u(3)], lambda L, a, b: (a * 1).copy_(b)),
    # NN
    "softmax": ([_u(2, 3)], lambda L, a: L.softmax(a, 1)),
    "log_softmax": ([_u(2, 3)], lambda L, a: L.log_softmax(a, 0)),
    "layer_norm": ([_u(2, 4), _u(4), _u(4)], lambda L, x, w, b: _F(L).layer_norm(x, (4,), w, b)),
    "rms_norm": ([_u(2, 4), _u(4)], lambda L, x, w: _F(L).rms_norm(x, (4,), w)),
    "dropout_eval": ([_u(2, 3)], lambda L, a: _F(L).dropout(a, 0.5, training=False)),
    "silu": ([_u(2, 3)], lambda L, a: _F(L).silu(a)),
    "gelu": ([_u(2, 3)], lambda L, a: _F(L).gelu(a)),
    "gelu_tanh": ([_u(2, 3)], lambda L, a: _F(L).gelu(a, approximate="tanh")),
    "elu": ([_u(2, 3)], lambda L, a: _F(L).elu(a)),
    "leaky_relu": ([_u(2, 3)], lambda L, a: _F(L).leaky_relu(a, 0.1)),
    "softplus": ([_u(2, 3)], lambda L, a: _F(L).softplus(a)),
    "mish": ([_u(2, 3)], lambda L, a: _F(L).mish(a)),
    "hardtanh": ([_u(2, 3)], lambda L, a: _F(L).hardtanh(a)),
    "mse_loss": ([_u(2, 3), _u(2, 3)], lambda L, a, b: _F(L).mse_loss(a, b)),
    "mse_loss_none": ([_u(2, 3), _u(2, 3)], lambda L, a, b: _F(L).mse_loss(a, b, reduction="none")),
    "cross_entropy": ([_u(3, 4)], lambda L, a: _F(L).cross_entropy(a, _ix2(L, [0, 3, 1]))),
    "nll_loss": ([_u(3, 4)], lambda L, a: _F(L).nll_loss(a, _ix2(L, [0, 3, 1]))),
    "embedding": ([_u(5, 3)], lambda L, w: _F(L).embedding(_ix2(L, [[0, 2], [4, 0]]), w)),
    "sdpa_math": ([_u(1, 2, 3, 4), _u(1, 2, 3, 4), _u(1, 2, 3, 4)],
                  lambda L, q, k, v: _F(L).scaled_dot_product_attention(q, k, v, attn_mask=q[0, 0, :, :3] > 0)),
    # reflected dunders (torch/_tensor.py): rsub.Scalar, reciprocal * other, pow.Scalar, remainder.Scalar_Tensor
    "rmod": ([_u(3, lo=0.5, hi=2)], lambda L, a: 2 % a),
    "rfloordiv": ([_u(3, lo=0.5, hi=2)], lambda L, a: 2 // a),
    "rsub_int": ([_u(3)], lambda L, a: 3 - a),
    "rdiv_int": ([_u(3, lo=0.5, hi=2)], lambda L, a: 1 / a),
    # in-place variants and in-place on views (CopySlices)
    "inplace_view": ([_u(3, 4), _u(4)], lambda L, a, b: _inplace_row(a * 1, b)),
    "inplace_transposed": ([_u(3, 4)], lambda L, a: _inplace_t(a * 1)),
    "index_put_": ([_u(4, 3), _u(3)], lambda L, a, v: (a * 1).index_put_((_ix2(L, [2]),), v)),
    "masked_fill_": ([_u(2, 3)], lambda L, a: (a * 1).masked_fill_(_mask(L), 0.5)),
    "clamp_": ([_u(2, 3)], lambda L, a: (a * 1).clamp_(-0.5, 0.5)),
    "addcmul_": ([_u(2, 3), _u(3), _u(2, 3)], lambda L, a, b, c: (a * 1).addcmul_(b, c)),
    "div_mode_": ([_u(2, 3), _u(3, lo=0.5, hi=2)], lambda L, a, b: (a * 1).div_(b, rounding_mode="trunc")),
    "T": ([_u(2, 3)], lambda L, a: a.T),
    "mT": ([_u(2, 2, 3)], lambda L, a: a.mT),
    "sum_dtype": ([_u(2, 3)], lambda L, a: a.sum(dtype=L.float32)),
    "std_correction": ([_u(2, 3)], lambda L, a: L.std(a, 1, correction=0)),
    "norm_p1": ([_u(2, 3)], lambda L, a: a.norm(1)),
    "where_scalar": ([_u(2, 3)], lambda L, a: L.where(a > 0, a, 0.0)),
    "softmax_dtype": ([_u(2, 3)], lambda L, a: L.softmax(a, 1, dtype=L.float32)),
    "pow_tensor_scalar_0": ([_u(2, 3)], lambda L, a: a ** 0),
    "native_dropout_train": ([_u(3, 4)], lambda L, a: L.native_dropout(a, 0.0, True)[0]),
    "sdpa_causal": ([_u(1, 2, 3, 4), _u(1, 2, 3, 4), _u(1, 2, 3, 4)],
                    lambda L, q, k, v: _F(L).scaled_dot_product_attention(q, k, v, is_causal=True)),
}


def _inplace_row(a, b):
    a[1].mul_(b)
    return a


def _inplace_t(a):
    a.t().add_(1.5)
    return a


def _setitem(a, v):
    a[1] = v
    return a


# deviations the sample finds, each with its reason (docs/AUTOGRAD.md); the
# value is (torchlet's grad_fn name, torch's)
KNOWN_DYNAMIC: dict[str, tuple] = {
    # torch's 1-d @ 2-d squeezes in place (squeeze_.dim: SqueezeBackward4);
    # torchlet declares no in-place squeeze_: squeeze.dim (SqueezeBackward1)
    "matmul_1d_2d": ("SqueezeBackward1", "SqueezeBackward4"),
}


def _first(r):
    return r[0] if isinstance(r, (tuple, list)) else r


def _run(L, specs, fn, arrays):
    leaves = []
    for a in arrays:
        t = L.tensor(np.array(a))
        t.requires_grad_(True)
        leaves.append(t)
    r = _first(fn(L, *leaves))
    name = r.grad_fn.name() if r.grad_fn is not None else None
    out = (name, bool(r.requires_grad), str(r.dtype).split(".")[-1], tuple(r.shape))
    if not r.requires_grad:
        return out, None
    w = L.tensor(np.asarray(RW.standard_normal(tuple(r.shape))), dtype=r.dtype)
    try:
        grads = L.autograd.grad((r * w).sum(), leaves, allow_unused=True)
    except Exception as e:  # noqa: BLE001 - the error type is compared with torch's
        return out, type(e).__name__
    return out, [None if g is None else np.array(g.detach().numpy()) for g in grads]


RW = np.random.default_rng(0)


@needs_torch
@pytest.mark.parametrize("name", sorted(DYNAMIC))
def test_grad_fn_and_gradients_match_torch(name):
    global RW
    specs, fn = DYNAMIC[name]
    arrays = [_make(s) for s in specs]
    RW = np.random.default_rng(11)
    got = _run(torchlet, specs, fn, arrays)
    RW = np.random.default_rng(11)
    want = _run(torch, specs, fn, arrays)
    if name in KNOWN_DYNAMIC:
        assert (got[0][0], want[0][0]) == KNOWN_DYNAMIC[name]
        got = ((want[0][0],) + got[0][1:], got[1])
    assert got[0] == want[0]
    if isinstance(want[1], list):
        assert isinstance(got[1], list), got[1]
        for g, p in zip(got[1], want[1]):
            assert (g is None) == (p is None)
            if g is not None:
                tol = 1e-10 if want[0][2] == "float64" else 1e-5  # a float32 result: float32 backward
                np.testing.assert_allclose(g, p, rtol=tol, atol=tol * 1e-2)
    else:
        assert got[1] == want[1]


# ------------------------------------------------------------- _unsafe_view

def _uv(x, size):
    """_unsafe_view has no Python binding (PyTorch neither): the operator itself"""
    return torchlet.library.call("aten::_unsafe_view", x, list(size))


@pytest.mark.parametrize("shape, size", [((3, 4), (2, 6)), ((3, 4), (-1,)), ((), (1, 1)), ((0, 3), (3, 0)), ((2, 3, 4), (4, -1))])
def test_unsafe_view_against_numpy_and_torch(shape, size):
    a0 = R5.standard_normal(shape)
    x, px = _pair(a0)
    r = _uv(x * 2.0, size)
    np.testing.assert_array_equal(_np(r), (a0 * 2.0).reshape(size))
    assert r.grad_fn.name() == "UnsafeViewBackward0"
    w0 = R5.standard_normal(tuple(r.shape))
    (g,) = torchlet.autograd.grad((r * torchlet.tensor(w0)).sum(), [x])
    np.testing.assert_array_equal(_np(g), 2.0 * w0.reshape(shape))
    out = torchlet.empty(0, dtype=torchlet.float64)
    r_out = torchlet.library.call("aten::_unsafe_view.out", x.detach(), list(size), out)
    assert r_out.data_ptr() == out.data_ptr()  # written into out (resized)
    np.testing.assert_array_equal(_np(out), a0.reshape(size))
    if torch is not None:
        pr = torch.ops.aten._unsafe_view(px * 2.0, size)
        assert pr.grad_fn.name() == r.grad_fn.name() and tuple(pr.shape) == tuple(r.shape)


def test_unsafe_view_errors_match_torch():
    a0 = R5.standard_normal((3, 4))
    x, px = _pair(a0, requires_grad=False)
    for size in [(5, 2), (-1, -1)]:
        with pytest.raises(RuntimeError) as e:
            _uv(x, size)
        if torch is not None:
            with pytest.raises(RuntimeError) as pe:
                torch.ops.aten._unsafe_view(px, size)
            assert str(e.value) == str(pe.value)
    with pytest.raises(RuntimeError) as e:  # not viewable: a transposed tensor
        _uv(x.t(), (12,))
    if torch is not None:
        with pytest.raises(RuntimeError) as pe:
            torch.ops.aten._unsafe_view(px.t(), (12,))
        assert str(e.value) == str(pe.value)
