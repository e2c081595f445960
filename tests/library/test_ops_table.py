"""torchlet.ops: packets, overloads, schemas, calls and overload resolution."""
import numpy as np
import pytest

import torchlet as tl
from torchlet import ops
from torchlet.library import Library


def test_handles_are_cached_and_unique():
    assert ops.aten is ops.aten
    assert ops.aten.add is ops.aten.add
    assert ops.aten.add.Tensor is ops.aten.add.Tensor
    assert ops.aten.add.Tensor.overloadpacket is ops.aten.add
    assert ops.aten.sin.default is ops.aten.sin.default


def test_names_and_reprs():
    op = ops.aten.add.Tensor
    assert str(op) == "aten.add.Tensor"
    assert op.name() == "aten::add.Tensor"
    assert repr(op) == "<OpOverload(op='aten.add', overload='Tensor')>"
    assert str(ops.aten.add) == "aten.add"
    assert repr(ops.aten.add) == "<OpOverloadPacket(op='aten.add')>"
    assert op._opname == "add" and op._overloadname == "Tensor" and op.namespace == "aten"
    assert ops.aten.sin.default._overloadname == "default"


def test_schema_model():
    s = ops.aten.add.Tensor._schema
    assert str(s) == "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
    assert s.name == "aten::add" and s.overload_name == "Tensor"
    assert [a.name for a in s.arguments] == ["self", "other", "alpha"]
    assert [a.kwarg_only for a in s.arguments] == [False, False, True]
    assert s.arguments[2].default_value == 1 and not s.is_mutable
    assert ops.aten.sin.default._schema.overload_name == ""
    m = ops.aten.add_.Tensor._schema
    assert m.is_mutable and m.arguments[0].alias_info.is_write
    assert m.arguments[0].alias_info.before_set == {"a"}
    assert str(m) == "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)"
    assert str(ops.aten.add.out._schema).endswith("Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)")
    assert ops.aten.add.out._schema.arguments[-1].is_out


def test_every_generated_schema_round_trips():
    from torchlet._schema import parse
    n = 0
    for ns in ["aten"]:
        for name in getattr(ops, ns):
            packet = getattr(getattr(ops, ns), name)
            for ov in packet.overloads():
                s = getattr(packet, ov)._schema
                assert str(parse(str(s))) == str(s)
                n += 1
    assert n > 600


def test_tags():
    assert [str(t) for t in ops.aten.add.Tensor.tags] == ["Tag.core", "Tag.pointwise", "Tag.pt2_compliant_tag"]
    assert tl.Tag.pointwise in ops.aten.mul.Tensor.tags
    assert tl.Tag.reduction in ops.aten.sum.dim_IntList.tags


def test_unknown_names_raise_attribute_error():
    with pytest.raises(AttributeError, match="'_OpNamespace' 'aten' object has no attribute 'nope'"):
        ops.aten.nope
    with pytest.raises(AttributeError, match="The underlying op of 'aten.add' has no overload name 'nope'"):
        ops.aten.add.nope
    assert not hasattr(ops.mylib_never_defined, "foo")
    assert getattr(ops.aten, "nope", 7) == 7


def test_overloads_listed():
    ovs = ops.aten.add.overloads()
    assert {"Tensor", "Scalar", "out"} <= set(ovs)
    assert ops.aten.sin.overloads()[0] == "default"


@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 5)])
def test_calls_match_bindings(rng, shape):
    a = tl.tensor(rng.standard_normal(shape).astype(np.float32))
    b = tl.tensor(rng.standard_normal(shape).astype(np.float32))
    np.testing.assert_array_equal(ops.aten.add.Tensor(a, b).numpy(), (a + b).numpy())
    np.testing.assert_array_equal(ops.aten.add.Tensor(a, b, alpha=3).numpy(), tl.add(a, b, alpha=3).numpy())
    np.testing.assert_array_equal(ops.aten.mul.Scalar(a, 2.5).numpy(), (a * 2.5).numpy())
    out = tl.empty(shape)
    r = ops.aten.add.out(a, b, out=out)
    assert r is not out and np.array_equal(out.numpy(), (a + b).numpy())


def test_multiple_returns_and_lists(rng):
    x = tl.tensor(rng.standard_normal((3, 4)).astype(np.float32))
    vals, idx = ops.aten.max.dim(x, 1)
    np.testing.assert_array_equal(vals.numpy(), x.numpy().max(1))
    np.testing.assert_array_equal(idx.numpy(), x.numpy().argmax(1))
    s = ops.aten.sum.dim_IntList(x, [0, 1], keepdim=True)
    assert s.shape == (1, 1)
    parts = ops.aten.split_with_sizes.default(x, [1, 3], 1)
    assert isinstance(parts, list) and [p.shape for p in parts] == [(3, 1), (3, 3)]
    c = ops.aten.cat.default([x, x], 0)
    assert c.shape == (6, 4)
    z = ops.aten.zeros.default([2, 3], dtype=tl.float64)
    assert z.dtype == tl.float64 and z.shape == (2, 3)


def test_non_contiguous_inputs(rng):
    x = tl.tensor(rng.standard_normal((4, 6)).astype(np.float32))
    t = x.t()
    np.testing.assert_array_equal(ops.aten.neg.default(t).numpy(), -x.numpy().T)


def test_bad_calls_raise_pytorch_errors():
    a = tl.ones(2)
    with pytest.raises(RuntimeError, match=r"aten::add\(\) expected at most 3 argument\(s\) but received 4"):
        ops.aten.add.Tensor(a, a, a, a)
    with pytest.raises(RuntimeError, match="Unknown keyword argument 'beta' for operator 'aten::add'"):
        ops.aten.add.Tensor(a, a, beta=2)
    with pytest.raises(RuntimeError, match="is missing value for argument 'other'"):
        ops.aten.add.Tensor(a)
    with pytest.raises(RuntimeError, match="Expected a value of type 'Scalar' for argument 'alpha'"):
        ops.aten.add.Tensor(a, a, alpha="x")
    with pytest.raises(RuntimeError, match="Expected a value of type 'Tensor' for argument 'self'"):
        ops.aten.sin.default(3)
    # a Tensor is never silently taken for a float
    with pytest.raises(RuntimeError, match="Expected a value of type 'Scalar'"):
        ops.aten.mul.Scalar(a, tl.tensor(2.0))
    # the kernel's own errors come through with their type
    with pytest.raises(RuntimeError, match="must match the size"):
        ops.aten.add.Tensor(tl.ones(2), tl.ones(3))


def test_resolve_rule():
    a = tl.ones(2)
    assert ops.aten.add.resolve(a, a) is ops.aten.add.Tensor
    assert ops.aten.add.resolve(a, 2) is ops.aten.add.Scalar        # exact match beats number->Tensor
    assert ops.aten.add.resolve(a, a, out=tl.empty(2)) is ops.aten.add.out
    assert ops.aten.sum.resolve(a) is ops.aten.sum.default
    assert ops.aten.sum.resolve(a, [0]) is ops.aten.sum.dim_IntList
    np.testing.assert_array_equal(ops.aten.add(a, 2).numpy(), [3.0, 3.0])
    with pytest.raises(RuntimeError, match="failed to match any schema"):
        ops.aten.add("x")


def test_resolve_ambiguity_and_conversions():
    with Library("tlres", "DEF") as lib:
        lib.define("f.flt(Tensor x, float y) -> Tensor")
        lib.define("f.int(Tensor x, int y) -> Tensor")
        lib.define("g.a(Tensor x, int y=0) -> Tensor")
        lib.define("g.b(Tensor x, int z=0) -> Tensor")
        for n in ("f.flt", "f.int", "g.a", "g.b"):
            lib.impl(n, lambda x, **kw: x.clone(), "CPU")
        x = tl.ones(1)
        assert ops.tlres.f.resolve(x, 3) is ops.tlres.f.int
        assert ops.tlres.f.resolve(x, 3.0) is ops.tlres.f.flt
        with pytest.raises(RuntimeError, match="failed to match any schema"):
            ops.tlres.f.resolve(x, True)           # a bool is neither an int nor a float here
        assert ops.tlres.f.resolve(x, np.int64(3)) is ops.tlres.f.int   # __index__: a conversion
        with pytest.raises(RuntimeError, match="matches several overloads equally well"):
            ops.tlres.g.resolve(x)
        assert ops.tlres.g.resolve(x, y=1) is ops.tlres.g.a


def test_runtime_operators_appear_and_disappear():
    lib = Library("tlappear", "DEF")
    lib.define("one(Tensor x) -> Tensor")
    lib.impl("one", lambda x: x + 1, "CPU")
    assert "one" in list(ops.tlappear)
    p = ops.tlappear.one
    assert ops.tlappear.one.default(tl.zeros(1)).tolist() == [1.0]
    lib.define("one.two(Tensor x, Tensor y) -> Tensor")
    assert set(p.overloads()) == {"default", "two"}
    lib._destroy()
    assert not hasattr(ops.tlappear, "one")
    # the namespace can be defined again, with another schema
    with Library("tlappear", "DEF") as lib2:
        lib2.define("one(Tensor x, int k) -> Tensor")
        lib2.impl("one", lambda x, k: x * k, "CPU")
        assert ops.tlappear.one(tl.ones(2), 3).tolist() == [3.0, 3.0]
        assert str(ops.tlappear.one.default._schema) == "tlappear::one(Tensor x, int k) -> Tensor"


def test_redispatch_below_autograd():
    x = tl.ones(2, requires_grad=True)
    ks = tl._C._dispatch_keys(x)
    below = tl._dispatch.DispatchKeySet(tl._C.lib.tl_keyset_below(int(ks), tl._dispatch._key("ADInplaceOrView")))
    y = ops.aten.mul.Tensor.redispatch(below, x, x)
    assert not y.requires_grad and y.tolist() == [1.0, 1.0]


def test_python_kernel_sees_calls_through_ops():
    seen = []
    with Library("aten", "IMPL") as lib:
        def my_sin(x):
            seen.append(x.shape)
            return x.clone()
        lib.impl("sin", my_sin, "CPU")
        ops.aten.sin.default(tl.ones(3))
        tl.sin(tl.ones(2))
    assert seen == [(3,), (2,)]
    assert tl.sin(tl.zeros(1)).tolist() == [0.0]


def test_against_pytorch():
    torch = pytest.importorskip("torch")
    for name in ["add", "mul", "sum", "sin", "max", "cat", "zeros"]:
        tp, lp = getattr(torch.ops.aten, name), getattr(ops.aten, name)
        for ov in lp.overloads():
            if ov in tp.overloads():
                assert str(getattr(lp, ov)._schema) == str(getattr(tp, ov)._schema), (name, ov)
                assert str(getattr(lp, ov)) == str(getattr(tp, ov))
                assert repr(getattr(lp, ov)) == repr(getattr(tp, ov))


def test_keyword_spellings_and_plain_runtime_errors():
    a, b = tl.tensor([1.0, 2.0]), tl.tensor([3.0, 4.0])
    op = ops.aten.add.Tensor
    for call in (lambda: op(a, b), lambda: op(a, other=b), lambda: op(self=a, other=b),
                 lambda: op(other=b, self=a, alpha=1)):
        assert call().tolist() == [4.0, 6.0]
    assert op(a, b, 2).tolist() == [7.0, 10.0]              # keyword-only taken positionally, as PyTorch
    for bad, text in [(lambda: op(other=b), "missing value for argument 'self'"),
                      (lambda: op(a, alpha=2), "missing value for argument 'other'"),
                      (lambda: op(a, b, 1, 2), "expected at most 3 argument"),
                      (lambda: op(a, b, nope=1), "Unknown keyword argument 'nope'")]:
        with pytest.raises(RuntimeError, match=text) as e:
            bad()
        assert type(e.value) is RuntimeError
    # a kernel's own TypeError is not mistaken for a binding error (no second run)
    calls = []
    with Library("tlkerr", "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")

        def f(x):
            calls.append(1)
            raise TypeError("kernel says no")

        lib.impl("f", f, "CPU")
        with pytest.raises(TypeError, match="kernel says no"):
            ops.tlkerr.f(tl.ones(1))
    assert calls == [1]
