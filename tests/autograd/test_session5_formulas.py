"""Autograd coverage against PyTorch 2.13 (issue 6, session 5 autograd).

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

The formulas added in session 5 (native_dropout_backward, the functional
_index_put_impl) are also compared with torch directly, including second
derivatives.
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

def _pytorch_yaml_dir() -> Path | None:
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
    # CompositeImplicitAutograd (the NN slice's choice: operators under grad
    # mode, the fused kernel otherwise), so they differentiate through their
    # decomposition: same values, other node names
    "native_layer_norm_backward": ("composite", "formula NativeLayerNormBackwardBackward0"),
    "mse_loss_backward": ("composite", "formula MseLossBackwardBackward0"),
    # copy_: PyTorch's is hand-written (VariableTypeManual), same node name CopyBackwards
    "copy_": ("formula CopyBackward0", "NotImplemented"),
}


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
    return not (base in {"argmax", "argmin", "isinf", "isnan", "isfinite", "nonzero", "count_nonzero", "all", "any"}
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
    torchlet leaves to the NotImplemented fallback (must stay empty)"""
    left = {n: p for n, (t, p) in _statuses().items() if t == "NotImplemented" and p.startswith("formula ")}
    assert left == {}


# --------------------------------------------- the session 5 formulas vs torch

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
