"""Overload resolution and TypeError texts of the generated bindings.

The rule (docs/PYTHON_BINDINGS.md): the overloads of a name are tried in
PyTorch's order, fixed at generation time; the first whose parameters accept
the call's arguments (types checked, arity, keywords) wins.
"""
import inspect
import re

import numpy as np
import pytest

import torchlet as tl
from api_helpers import needs_torch, torch
from torchlet._generated import _ops


def test_python_number_vs_tensor_vs_zero_dim():
    x = tl.tensor([1.0, 2.0])
    # add: the Tensor overload takes numbers (wrapped 0-dim tensors), as in PyTorch
    assert tl.add(x, 2).tolist() == [3.0, 4.0]
    assert tl.add(x, tl.tensor(2)).tolist() == [3.0, 4.0]
    # rsub: a number picks rsub.Scalar, a tensor rsub.Tensor (no numbers-as-tensors)
    assert tl.rsub(x, 5).tolist() == [4.0, 3.0]
    assert tl.rsub(x, tl.tensor([5.0, 5.0])).tolist() == [4.0, 3.0]
    # a 0-dim tensor is accepted where a Number is expected
    assert tl.rsub(x, tl.tensor(5.0), alpha=tl.tensor(2)).tolist() == [3.0, 1.0]


def test_lists_vs_ints_and_defaults():
    x = tl.arange(6.0).view(2, 3)
    assert x.sum().item() == 15.0                     # sum(Tensor, *, dtype)
    assert x.sum(0).tolist() == [3.0, 5.0, 7.0]       # int[1] accepts an int
    assert x.sum((0, 1)).item() == 15.0
    assert x.sum([1], True).shape == (2, 1)
    assert x.sum(dim=1, keepdim=True).shape == (2, 1)
    assert x.sum(dtype=tl.float64).dtype is tl.float64
    # *size varargs vs one sequence vs keyword
    assert tl.zeros(2, 3).shape == tl.zeros((2, 3)).shape == tl.zeros([2, 3]).shape == tl.zeros(size=(2, 3)).shape
    assert x.view(3, 2).shape == x.view((3, 2)).shape == x.view([3, 2]).shape == (3, 2)
    assert x.view(-1).shape == (6,)
    assert x.permute(1, 0).shape == (3, 2) and x.permute((1, 0)).shape == (3, 2)


def test_keyword_only_and_out():
    x = tl.tensor([1.0, 2.0])
    with pytest.raises(TypeError):
        tl.add(x, x, 2)                               # alpha is keyword-only
    out = tl.empty(2)
    assert tl.add(x, x, out=out) is out
    with pytest.raises(TypeError, match="unexpected keyword argument 'beta'"):
        x.add_(x, beta=2)
    with pytest.raises(TypeError, match="argument 'out' must be Tensor, not int"):
        tl.add(x, x, out=3)


def test_single_signature_error_text():
    x = tl.tensor([1.0])
    with pytest.raises(TypeError) as e:
        tl.add(x, "a")
    assert str(e.value) == "add(): argument 'other' (position 2) must be Tensor, not str"
    with pytest.raises(TypeError) as e:
        x.add("a")
    assert str(e.value) == "add(): argument 'other' (position 1) must be Tensor, not str"
    with pytest.raises(TypeError) as e:
        tl.relu(1)
    assert str(e.value) == "relu(): argument 'input' (position 1) must be Tensor, not int"
    with pytest.raises(TypeError) as e:
        tl.mm(x, 1)
    assert str(e.value) == "mm(): argument 'mat2' (position 2) must be Tensor, not int"
    with pytest.raises(TypeError, match=r"full\(\): argument 'fill_value' \(position 2\) must be Number, not str"):
        tl.full((2,), "a")


def test_invalid_combination_text():
    x = tl.tensor([1.0])
    with pytest.raises(TypeError) as e:
        tl.sum(x, "a")
    assert str(e.value) == (
        "sum() received an invalid combination of arguments - got (Tensor, str), but expected one of:\n"
        " * (Tensor input, *, torchlet.dtype dtype = None)\n"
        " * (Tensor input, tuple of ints dim, bool keepdim = False, *, torchlet.dtype dtype = None, "
        "Tensor out = None)\n"
        "      didn't match because some of the arguments have invalid types: (Tensor, !str!)\n")
    with pytest.raises(TypeError) as e:
        x.sum(1, 2, 3, 4)
    assert str(e.value).startswith("sum() received an invalid combination of arguments - got (int, int, int, int)")
    assert " * (*, torchlet.dtype dtype = None)\n" in str(e.value)   # methods print no self


@needs_torch
@pytest.mark.parametrize("call", [
    lambda m, x: m.sum(x, "a"),
    lambda m, x: x.sum(1, 2, 3, 4),
    lambda m, x: m.add(x, "a"),
    lambda m, x: x.add("a"),
    lambda m, x: m.relu(1),
    lambda m, x: m.mm(x, 1),
])
def test_error_texts_like_torch(call):
    """First line and the listed signatures agree with PyTorch's (torch. -> torchlet.)."""
    def text(mod, x):
        with pytest.raises(TypeError) as e:
            call(mod, x)
        return str(e.value)

    ours = text(tl, tl.ones(2))
    theirs = text(torch, torch.ones(2)).replace("torch.", "torchlet.")
    assert ours.splitlines()[0] == theirs.splitlines()[0]
    sigs = lambda s: [ln for ln in s.splitlines() if ln.startswith(" * ")]  # noqa: E731
    # PyTorch also lists overloads torchlet does not declare (Dimname ones)
    assert set(sigs(ours)) <= set(sigs(theirs)) or not sigs(theirs)


def test_dunders_return_notimplemented():
    x = tl.tensor([1.0])
    with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for \+: 'Tensor' and 'str'"):
        x + "a"
    with pytest.raises(TypeError):
        "a" - x
    assert x.__add__("a") is NotImplemented
    assert x.__rsub__("a") is NotImplemented
    assert hash(x) == hash(x)                      # Tensor stays hashable


def test_inplace_dunder_and_result_identity():
    x = tl.tensor([1.0, 2.0])
    y = x
    y += 1
    assert y is x and x.tolist() == [2.0, 3.0]
    y *= 2
    assert y is x and x.tolist() == [4.0, 6.0]
    z = tl.tensor([1, 2])
    with pytest.raises(RuntimeError, match="can't be cast"):
        z += 1.5                                   # result type Float can't be cast to Long


def test_reserved_and_signature_introspection():
    assert _ops.SIGNATURES[("function", "add")] == (
        "(Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None)",)
    sig = inspect.signature(tl.add)
    assert list(sig.parameters) == ["input", "other", "alpha", "out"]
    assert sig.parameters["alpha"].kind is inspect.Parameter.KEYWORD_ONLY
    assert sig.parameters["alpha"].default == 1
    assert "requires_grad" in inspect.signature(tl.zeros).parameters
    assert "requires_grad" not in _ops.SIGNATURES[("method", "to")][0]


def test_sort_overloads_unit():
    """Scalar after Tensor, int[] after int, independent of YAML order."""
    from codegen.api_python import make_signature, sort_overloads
    from codegen.schema import parse_schema

    s_scalar = make_signature(parse_schema("eq.Scalar(Tensor self, Scalar other) -> Tensor"), None, False)
    s_tensor = make_signature(parse_schema("eq.Tensor(Tensor self, Tensor other) -> Tensor"), None, False)
    assert sort_overloads([s_scalar, s_tensor]) == [s_tensor, s_scalar]
    assert sort_overloads([s_tensor, s_scalar]) == [s_tensor, s_scalar]
    s_int = make_signature(parse_schema("squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)"), None, False)
    s_ints = make_signature(parse_schema("squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)"), None, False)
    assert sort_overloads([s_ints, s_int]) == [s_int, s_ints]


def test_python_signature_conventions():
    from codegen.api_python import make_signature
    from codegen.schema import parse_schema

    s = make_signature(parse_schema(
        "zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
        "bool? pin_memory=None) -> Tensor"), None, False)
    assert s.varargs and s.factory
    assert s.signature_str() == ("(tuple of ints size, *, torchlet.dtype dtype = None, torchlet.layout layout = None, "
                                 "torchlet.device device = None, bool pin_memory = None, bool requires_grad = False)")
    s = make_signature(parse_schema("f(Tensor self, int[2] stride=1, *, ScalarType from) -> Tensor"), None, False)
    assert [a.name for a in s.args] == ["input", "stride", "from_"]
    assert s.args[1].default == "(1, 1)" and s.args[1].default_doc == "1"
    m = make_signature(parse_schema("view(Tensor(a) self, SymInt[] size) -> Tensor(a)"), None, True)
    assert m.varargs and m.signature_str() == "(tuple of ints size)"


def test_required_keyword_only_selects_overload():
    """rand(size) vs rand.generator(size, *, generator): the generator overload
    sorts first but needs its keyword-only argument."""
    assert tl.rand(2, 3).shape == (2, 3)
    g1, g2 = tl.Generator().manual_seed(7), tl.Generator().manual_seed(7)
    assert tl.rand((3,), generator=g1).tolist() == tl.rand(3, generator=g2).tolist()
    assert tl.randn(4, dtype=tl.float64).dtype is tl.float64


def test_more_overloads():
    x = tl.ones(1, 3, 1)
    assert x.squeeze().shape == (3,) and x.squeeze(0).shape == (3, 1) and x.squeeze((0, 2)).shape == (3,)
    assert tl.arange(1, 5, 2).tolist() == [1, 3] and tl.arange(5.0).dtype is tl.float32
    a = tl.tensor([7, -7])
    assert tl.div(a, 2, rounding_mode="floor").tolist() == [3, -4]
    assert a.div(2, rounding_mode="trunc").tolist() == [3, -3]
    b = tl.ones(2)
    assert b.copy_(5).tolist() == [5.0, 5.0]            # copy_ takes numbers as tensors, like PyTorch
