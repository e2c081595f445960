"""torchlet.compile's surface: decorator and module forms, the eager backend,
graph breaks (fullgraph errors naming file:line), guards and recompiles,
the cache limit, stances, check=True, explain, kernels(), reset."""
import re
import warnings

import numpy as np
import pytest

import torchlet as torch
from torchlet.compiler import RecompileError, Unsupported


def close(a, b, tol=1e-6):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def test_decorator_runs_add_fn():
    @torch.compile
    def add_fn(a, b):
        return a + b

    a, b = torch.randn(5, 3), torch.randn(3)
    assert np.array_equal(add_fn(a, b).numpy(), (a + b).numpy())
    assert add_fn.__name__ == "add_fn"


def test_decorator_with_options_and_structured_outputs():
    @torch.compile(fullgraph=True)
    def f(x, pair, scale=2.0):
        y = (x * scale).sin()
        return {"y": y, "rest": [pair[0] + y, pair[1]], "n": 3}

    x, p0, p1 = torch.randn(4, 6), torch.randn(4, 6), torch.randn(2)
    out = f(x, (p0, p1), scale=3.0)
    assert out["n"] == 3 and out["rest"][1] is p1
    close(out["y"], (x * 3.0).sin())
    close(out["rest"][0], p0 + (x * 3.0).sin())


def test_module_parameters_are_lifted_not_frozen():
    lin = torch.nn.Linear(8, 4)
    m = torch.compile(lin)
    x = torch.randn(3, 8)
    close(m(x), lin(x))
    with torch.no_grad():
        lin.weight.mul_(2.0)      # an optimizer step: the compiled module sees it
    close(m(x), lin(x))
    assert [n for n, _ in m.named_parameters()] == ["_orig_mod.weight", "_orig_mod.bias"]
    assert m.in_features == 8


def test_eager_backend_matches_and_traces_custom_op_whole():
    Tensor = torch.Tensor

    @torch.library.custom_op("compiletest::rms_norm", mutates_args=())
    def rms_norm(x: Tensor, w: Tensor, eps: float) -> Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w

    @rms_norm.register_fake
    def _(x, w, eps):
        return torch.empty_like(x)

    w = torch.randn(16)

    def block(x):
        return torch.ops.compiletest.rms_norm(x, w, 1e-6) * 2 + 1

    for backend in ("eager", "inductor"):
        cb = torch.compile(block, fullgraph=True, backend=backend)
        x = torch.randn(4, 16)
        close(cb(x), block(x))
        ops = [str(n.op) for n in cb.last_entry.graph.nodes]
        assert "compiletest.rms_norm.default" in ops     # captured whole, not decomposed


def test_graph_break_fullgraph_names_file_and_line():
    def f(x):
        y = x * 2
        if y.sum() > 0:      # a data read
            return y
        return -y

    with pytest.raises(Unsupported, match=r"data read .* at .*test_compile_api\.py:\d+"):
        torch.compile(f, fullgraph=True)(torch.randn(3))


def test_graph_break_falls_back_to_eager_and_is_explained():
    def f(x):
        return x * 2 if float(x.sum()) > 0 else x * 3

    cf = torch.compile(f)
    x = torch.ones(3)
    assert np.array_equal(cf(x).numpy(), (x * 2).numpy())
    ex = torch.compiler.explain(f)(x)
    assert ex.graph_break_count == 1
    assert "data read" in str(ex.break_reasons[0]) and "test_compile_api.py" in ex.break_reasons[0].where


def test_new_batch_size_does_not_recompile_but_new_dtype_does():
    def f(x, w):
        return (x * w).tanh() + 1

    cf = torch.compile(f)
    w = torch.randn(32)
    for b in (2, 5, 17):
        x = torch.randn(b, 32)
        close(cf(x, w), f(x, w))
    assert len(cf._keys) == 1
    x64 = torch.randn(3, 32, dtype=torch.float64)
    w64 = w.to(torch.float64)
    close(cf(x64, w64), f(x64, w64))
    assert len(cf._keys) == 2


def test_size_reading_code_is_specialised():
    def f(x):
        return x * 2 if x.shape[0] > 4 else x * 3     # Python branching on a size

    cf = torch.compile(f)
    for b in (2, 8, 3, 9):
        x = torch.randn(b, 4)
        close(cf(x), f(x))
    assert cf.last_entry.size_dependent


def test_views_with_sizes_are_specialised():
    def f(x):
        return x.view(-1, 4).exp() * 2

    cf = torch.compile(f)
    for b in (2, 6):
        x = torch.randn(b, 8)
        close(cf(x), f(x))


def test_cache_limit_warns_once_naming_the_guard():
    def f(x):
        return x * 2 + 1

    cf = torch.compile(f, dynamic=False)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for n in range(1, 12):
            x = torch.randn(n)
            close(cf(x), f(x))
    msgs = [str(m.message) for m in w if "cache_size_limit" in str(m.message)]
    assert len(msgs) == 1 and "sizes of tensor argument 0" in msgs[0]


def test_stances():
    def f(x):
        return x + 1

    cf = torch.compile(f)
    cf(torch.randn(3))
    torch.compiler.set_stance("fail_on_recompile")
    cf(torch.randn(5))       # a new size: no recompile
    with pytest.raises(RecompileError, match="dtype"):
        cf(torch.randn(3, dtype=torch.float64))
    torch.compiler.set_stance("force_eager")
    assert cf(torch.ones(2, dtype=torch.float64)).dtype == torch.float64
    with pytest.raises(ValueError):
        torch.compiler.set_stance("sometimes")


def test_check_mode_compares_with_eager():
    cf = torch.compile(lambda x: (x * 3).exp().sum(-1), check=True)
    x = torch.randn(4, 7)
    cf(x)                                   # agrees with eager: no error
    plan = cf.last_entry.plan
    good = plan.run
    plan.run = lambda inputs: [t + 1e-3 for t in good(inputs)]     # a compiled result gone wrong
    with pytest.raises(RuntimeError, match=r"check=True\): output 0 differs from eager first at \(0,\)"):
        cf(x)


def test_kernels_name_operators_and_yaml_entries():
    cf = torch.compile(lambda x, y: (x * y + 1).sigmoid())
    cf(torch.randn(4, 4), torch.randn(4))
    src = cf.kernels()
    assert "aten.mul.Tensor" in src and "[mul.out]" in src and "TL_UFUNC_sigmoid" in src
    assert re.search(r"/\* fused_mul_add_sigmoid_\d+: pointwise", src)


def test_explain_reports_groups_guards_and_times():
    def rms(x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w

    ex = torch.compiler.explain(rms)(torch.randn(8, 32), torch.randn(32))
    assert ex.graph_count == 1 and ex.graph_break_count == 0
    assert ex.kernel_count == 1 and len(ex.groups) == 1
    assert set(ex.compile_times) == {"trace", "build", "first_call", "warm_call"}
    assert any("rank 2" in g for g in ex.out_guards)
    assert "Graph Count: 1" in str(ex)


def test_reset_forgets_compiled_graphs():
    cf = torch.compile(lambda x: x - 1)
    cf(torch.randn(2))
    assert cf._keys
    torch.compiler.reset()
    assert not cf._keys


def test_bad_arguments():
    with pytest.raises(ValueError, match="backend"):
        torch.compile(lambda x: x, backend="tvm")
    with pytest.raises(RuntimeError, match="Unrecognized mode"):
        torch.compile(lambda x: x, mode="fastest")
    with pytest.raises(RuntimeError, match="callable"):
        torch.compile(3)


def test_genuine_errors_raise_as_in_eager():
    cf = torch.compile(lambda a, b: a + b)
    with pytest.raises(RuntimeError, match="must match the size"):
        cf(torch.randn(3), torch.randn(4))


def test_in_place_graphs_run_in_order():
    def f(x, y):
        z = x * 2
        z.add_(y)
        return z * 3

    cf = torch.compile(f)
    x, y = torch.randn(5), torch.randn(5)
    close(cf(x, y), f(x, y))
    assert "in place" in cf.last_entry.plan.fallback_reason


def test_random_operator_draws_on_every_call():
    """dropout's mask is drawn by the compiled function on every call (the
    trace records empty_like + bernoulli_, as PyTorch's composite), and the
    draws are eager's: the same generator stream."""
    import torchlet.nn.functional as F

    def f(x):
        return F.dropout(x, 0.5, training=True) * 2

    cf = torch.compile(f)
    x = torch.ones(64)
    with torch.no_grad():
        torch.manual_seed(3)
        a, b = cf(x), cf(x)
        assert not torch.equal(a, b)
        torch.manual_seed(3)
        ea, eb = f(x), f(x)
    assert torch.equal(a, ea) and torch.equal(b, eb)
    assert any("bernoulli" in repr(n) for n in cf.last_entry.graph.nodes)
