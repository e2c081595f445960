"""Operators a plan runs whole call their generated binding (the overload's C
entry) instead of the boxed OpOverload path; the results are the reference
form's (TORCHLET_COMPILE_DIRECT=0), bit for bit, forward and backward."""
import numpy as np
import pytest

import torchlet as torch
from torchlet._compile import direct
from torchlet._compile.graph import Node, Value
from torchlet.overrides import TorchFunctionMode

F = torch.nn.functional


def _layer_norm(x, w):
    return F.layer_norm(x, (x.shape[-1],), w, w)


def _mixed(x, w):
    # opaque operators (matrix product, a view, a transpose, a sum over a
    # middle dimension, softmax over the first dimension) between fused groups
    h = (x @ w.t()).view(x.shape[0], 2, -1).transpose(0, 1)
    return torch.softmax(h.sum(1) * 0.5, 0) + h.amax(1)


def _inputs(rg, fn=None, seed=0):
    rng = np.random.default_rng(seed)
    x = torch.tensor(rng.standard_normal((6, 10)).astype(np.float32))
    w = torch.tensor(rng.standard_normal((10,) if fn is _layer_norm else (10, 10)).astype(np.float32))
    if rg:
        x.requires_grad_(True)
        w.requires_grad_(True)
    return x, w


def _run(fn, rg, monkeypatch, direct_on, x_t=False):
    monkeypatch.setenv("TORCHLET_COMPILE_DIRECT", "1" if direct_on else "0")
    torch.compiler.reset()
    cf = torch.compile(fn)
    x, w = _inputs(rg, fn)
    if x_t:       # a non-contiguous input: the group's Python form makes it contiguous
        x = torch.tensor(np.ascontiguousarray(x.detach().numpy().T)).t().requires_grad_(rg)
    out = cf(x, w)
    grads = []
    if rg:
        out.backward(torch.ones_like(out))
        grads = [x.grad, w.grad]
    e = cf.last_entry
    srcs = [e.plan.python] + ([e.backward.plan.python] if e.backward is not None else [])
    return out.detach().numpy(), [g.numpy() for g in grads], "\n".join(srcs)


@pytest.mark.parametrize("rg", [False, True])
def test_group_c_call_falls_back_to_the_python_form(rg, monkeypatch):
    out, grads, _ = _run(_rms, rg, monkeypatch, True, x_t=True)
    ref, ref_grads, _ = _run(_rms, rg, monkeypatch, False, x_t=True)
    np.testing.assert_array_equal(out, ref)
    for g, r in zip(grads, ref_grads):
        np.testing.assert_array_equal(g, r)
    # an empty row: the group runs operator by operator
    torch.compiler.reset()
    cf = torch.compile(_rms)
    x, w = torch.randn(3, 0), torch.randn(2, 0)
    assert cf(x, w).shape == (3, 0)


def _rms(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w[0]


@pytest.mark.parametrize("rg", [False, True])
@pytest.mark.parametrize("fn", [_layer_norm, _mixed, _rms])
def test_direct_plan_equals_reference_plan(fn, rg, monkeypatch):
    out, grads, src = _run(fn, rg, monkeypatch, True)
    ref, ref_grads, ref_src = _run(fn, rg, monkeypatch, False)
    assert ("(binding)" in src or "(its first result alone)" in src) and "(binding)" not in ref_src
    assert ("_run_group(" in src or fn is not _rms) and "_run_group(" not in ref_src
    np.testing.assert_array_equal(out, ref)
    for g, r in zip(grads, ref_grads):
        np.testing.assert_array_equal(g, r)
    x, w = _inputs(rg, fn)
    np.testing.assert_allclose(out, fn(x, w).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_lone_layer_norm_calls_its_binding():
    torch.compiler.reset()
    cf = torch.compile(_layer_norm)
    x, w = _inputs(False, _layer_norm)
    with torch.no_grad():
        cf(x, w)
    src = cf.last_entry.plan.python
    # only its first result is read: layer_norm's binding, one Tensor made
    assert "aten.native_layer_norm.default" in src and "(its first result alone)" in src


def test_number_in_a_tensor_slot_keeps_the_boxed_path():
    x = Value(0, (2,), torch.float32, "cpu", (1,))
    op = torch.ops.aten.add.Tensor
    assert direct.binding_for(Node(op, (x, 2.0), {}, [None], "single")) is None
    assert direct.binding_for(Node(op, (x, x), {}, [None], "single")) is not None
    # a kwarg the generated function does not take
    assert direct.binding_for(Node(op, (x, x), {"bogus": 1}, [None], "single")) is None


class _Recorder(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.seen = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.seen.append(getattr(func, "__name__", str(func)))
        return func(*args, **(kwargs or {}))


def test_torch_function_mode_runs_the_reference_form(monkeypatch):
    monkeypatch.setenv("TORCHLET_COMPILE_DIRECT", "1")
    torch.compiler.reset()
    cf = torch.compile(_layer_norm)
    x, w = _inputs(False, _layer_norm)
    with torch.no_grad():
        want = cf(x, w).numpy()          # compiled outside any mode
        rec = _Recorder()
        with rec:
            got = cf(x, w).numpy()
    np.testing.assert_array_equal(got, want)
    # the plan's own operator calls are not torch-function calls
    assert "native_layer_norm" not in rec.seen


# ---- the guard key read in C (runtime/python/compile_guard.c)

def _variants():
    """Calls that differ from the first in one guard field each."""
    x = torch.randn(4, 6)
    w = torch.randn(6)
    p = torch.nn.Parameter(torch.randn(6))
    return [
        ("same", (x, w)),
        ("same sizes, new tensors", (torch.randn(4, 6), torch.randn(6))),
        ("dtype", (x.double(), w.double())),
        ("non-contiguous", (torch.randn(6, 4).t(), w)),
        ("requires_grad", (x.clone().requires_grad_(True), w)),
        ("rank", (torch.randn(2, 4, 6), w)),
        ("size 1", (torch.randn(1, 6), w)),
        ("batch size", (torch.randn(5, 6), w)),
        ("type", (x, p)),
        ("structure", ([x, w],)),
    ]


def _entries_hit(monkeypatch, c_guard, size_read):
    from torchlet._compile import api
    monkeypatch.setattr(api, "cache_size_limit", 32)
    if not c_guard:
        monkeypatch.setattr(api, "_guard_key_c", None)

    def f(x, w=None):
        if isinstance(x, list):
            x, w = x
        y = x * w + 1.0
        return y * x.shape[-1] if size_read else y
    torch.compiler.reset()
    cf = torch.compile(f)
    hits = []
    for name, args in _variants():
        cf(*args)
        hits.append((name, id(cf.last_entry), len(cf._keys)))
        np.testing.assert_allclose(cf(*args).detach().numpy(), f(*args).detach().numpy(), rtol=1e-6)
    ids = {}
    return [(n, ids.setdefault(e, len(ids)), k) for n, e, k in hits], cf


@pytest.mark.parametrize("size_read", [False, True])
def test_c_guard_hits_and_misses_as_the_python_guard(monkeypatch, size_read):
    with pytest.MonkeyPatch.context() as mp:
        got, cf = _entries_hit(mp, True, size_read)
        from torchlet import _fast
        if _fast.enabled:       # (TORCHLET_NO_FAST_METHODS=1: C reads no tensor, the tuples serve)
            assert all(isinstance(k[1], bytes) for k in list(cf._generic) + list(cf._exact))
    with pytest.MonkeyPatch.context() as mp:
        want, cf = _entries_hit(mp, False, size_read)
        assert all(isinstance(k[1], tuple) for k in list(cf._generic) + list(cf._exact))
    assert got == want
    names = [n for n, _, _ in got]
    entry = dict((n, e) for n, e, _ in got)
    # each changed field is a new key (a recompile), but new tensors of the same kind are not
    assert entry["same sizes, new tensors"] == entry["same"]
    for n in names[2:]:
        if n == "batch size" and not size_read:
            assert entry[n] == entry["same"]        # sizes are not in a size-free key
        else:
            assert entry[n] != entry["same"], n


def test_c_guard_checks_lifted_tensors():
    lin = torch.nn.Linear(6, 3)
    cm = torch.compile(lin)
    x = torch.randn(4, 6)
    with torch.no_grad():
        cm(x)
        first = cm._compiled_forward.last_entry
        cm(x)
        assert cm._compiled_forward.last_entry is first
        lin.weight.requires_grad_(False)      # a lifted tensor's guard changed: a retrace
        np.testing.assert_allclose(cm(x).numpy(), lin(x).numpy(), rtol=1e-6)
        second = cm._compiled_forward.last_entry
        assert second is not first
        cm(x)
        assert cm._compiled_forward.last_entry is second


def test_c_guard_message_names_what_changed():
    torch.compiler.reset()
    torch.compiler.set_stance("fail_on_recompile")
    cf = torch.compile(lambda x: x + 1)
    torch.compiler.set_stance("default")
    cf(torch.randn(3))
    torch.compiler.set_stance("fail_on_recompile")
    with pytest.raises(torch.compiler.RecompileError, match="the dtype of tensor argument 0"):
        cf(torch.randn(3).double())


# ---- the backward node made in C (runtime/python/compile_node.c)

def test_c_node_is_made_and_released():
    import gc

    from torchlet._compile import api
    from torchlet.autograd import function as fn_mod
    assert api._attach_node_c is not None
    torch.compiler.reset()
    cf = torch.compile(lambda x, w: (x * w).sigmoid() * x)
    x, w = torch.randn(3, 5, requires_grad=True), torch.randn(5, requires_grad=True)
    cf(x, w)
    before = len(fn_mod._live)
    for _ in range(5):
        y = cf(x, w)
        assert y.grad_fn.name() == "CompiledFunctionBackward"
        assert y.grad_fn.next_functions[0][0].name().endswith("AccumulateGrad")
        y.sum().backward()
        del y
    gc.collect()
    assert len(fn_mod._live) <= before      # each node's release dropped its handle
    xe, we = x.detach().requires_grad_(True), w.detach().requires_grad_(True)
    ((xe * we).sigmoid() * xe).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 5 * xe.grad.numpy(), rtol=1e-5)


def test_lone_operator_with_backward_runs_with_its_own_autograd():
    torch.compiler.reset()
    cf = torch.compile(_layer_norm)
    x, w = _inputs(True, _layer_norm)
    y = cf(x, w)
    assert cf.last_entry.eager_op is not None
    assert y.grad_fn.name() == "NativeLayerNormBackward0"
    y.backward(torch.ones_like(y))
    xe, we = x.detach().requires_grad_(True), w.detach().requires_grad_(True)
    _layer_norm(xe, we).backward(torch.ones_like(y))
    np.testing.assert_array_equal(x.grad.numpy(), xe.grad.numpy())
    np.testing.assert_array_equal(w.grad.numpy(), we.grad.numpy())
    # something fused beside it: the compiled node
    torch.compiler.reset()
    cf = torch.compile(lambda x, w: _layer_norm(x, w) * 2)
    x, w = _inputs(True, _layer_norm)
    assert cf(x, w).grad_fn.name() == "CompiledFunctionBackward"


def _scalar_add(x, w):
    # a Python number in a Tensor slot (a wrapped 0-dim tensor, the program's
    # constant) and a full reduction: operators in the program
    return torch.add(x @ w, 2).sum() * x


@pytest.mark.parametrize("rg", [False, True])
@pytest.mark.parametrize("fn", [_layer_norm, _mixed, _rms, _scalar_add])
def test_plan_program_equals_python_form(fn, rg, monkeypatch):
    """The plan run whole in C (_run_program / _call_compiled and the C
    backward apply) gives the Python form's results bit for bit."""
    from torchlet._compile import api, plan
    monkeypatch.setenv("TORCHLET_COMPILE_DIRECT", "1")

    def run(program_on):
        if not program_on:
            monkeypatch.setattr(plan, "_c_program", lambda *a: None)
        torch.compiler.reset()
        cf = torch.compile(fn)
        outs = []
        for _ in range(2):          # the second backward runs the C apply
            x, w = _inputs(rg, fn)
            out = cf(x, w)
            if rg:
                out.backward(torch.ones_like(out))
                outs.append([out.detach().numpy(), x.grad.numpy(), w.grad.numpy()])
            else:
                outs.append([out.numpy()])
        e = cf.last_entry
        return outs, e
    got, e = run(True)
    assert e.plan.program is not None and (not rg or e.backward.plan.program is not None)
    ref, e_ref = run(False)
    assert e_ref.plan.program is None
    for a, b in zip(got, ref):
        for u, v in zip(a, b):
            np.testing.assert_array_equal(u, v)
    assert api._call_compiled_c is not None


def test_plan_program_runs_custom_operators_and_dispatch_modes():
    """A custom operator with a Python kernel runs from the program through
    the dispatcher; a dispatch mode active during the call sees the
    program's operators as it sees the Python form's."""
    from torchlet.utils._python_dispatch import TorchDispatchMode
    lib = torch.library.Library("progtest", "DEF")
    lib.define("twice(Tensor x) -> Tensor")
    lib.impl("twice", lambda x: x * 2, "CPU")
    lib.impl("twice", lambda x: torch.empty_like(x), "Meta")

    def f(x, w):
        return torch.ops.progtest.twice(x @ w) + 1

    torch.compiler.reset()
    cf = torch.compile(f)
    x, w = torch.randn(3, 4), torch.randn(4, 5)
    with torch.no_grad():
        out = cf(x, w)
        assert cf.last_entry.plan.program is not None
        np.testing.assert_allclose(out.numpy(), (x @ w).numpy() * 2 + 1, rtol=1e-6)
        seen = []

        class Log(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                seen.append(str(func))
                return func(*args, **(kwargs or {}))

        with Log():
            again = cf(x, w)
    np.testing.assert_array_equal(again.numpy(), out.numpy())
    assert any("mm" in s for s in seen) and any("twice" in s for s in seen), seen


def test_plan_program_error_is_raised():
    """An operator's error inside the program raises as in the Python form."""
    torch.compiler.reset()
    cf = torch.compile(lambda x, w: (x @ w).relu())
    with torch.no_grad():
        cf(torch.randn(3, 4), torch.randn(4, 5))
        assert cf.last_entry.plan.program is not None
        with pytest.raises(RuntimeError, match="cannot be multiplied|size mismatch|shapes"):
            cf(torch.randn(3, 4), torch.randn(3, 5))
