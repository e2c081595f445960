"""Errors users see, as PyTorch words them: Python's own argument errors name
the operator by PyTorch's name (not the generated identifier), too many
arguments for the only plausible overload, the out= autograd check's op name,
the "not implemented for" dtype errors' type. Each case runs against torch
when it is installed; the expected texts are PyTorch 2.13's."""
from __future__ import annotations

import pytest

tl = pytest.importorskip("torchlet")

try:
    import torch
except ImportError:  # pragma: no cover - torch is optional
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch not installed")


def error_of(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the case under test
        return type(e), str(e).splitlines()[0]
    return None, "no error"


def same_as_torch(case, want_type, want_text):
    """the error of case(module) in torchlet, and in torch when installed"""
    mods = [tl] + ([torch] if torch is not None else [])
    for m in mods:
        assert error_of(lambda: case(m)) == (want_type, want_text), m.__name__


# ------------------------------------------------------ Python's own errors

ARG_CASES = [
    (lambda m: m.linalg.svd(m.ones(2, 2), True, 1),
     "linalg_svd() takes from 1 to 2 positional arguments but 3 were given"),
    (lambda m: m.linalg.svd(m.ones(2, 2), foo=1), "linalg_svd() got an unexpected keyword argument 'foo'"),
    (lambda m: m.linalg.svdvals(m.ones(2, 2), 1), "linalg_svdvals() takes 1 positional argument but 2 were given"),
    (lambda m: m.linalg.vector_norm(m.ones(2), 2, None, False, None, 1),
     "linalg_vector_norm() takes from 1 to 4 positional arguments but 6 were given"),
    (lambda m: m.exp(m.ones(2), m.ones(2)), "exp() takes 1 positional argument but 2 were given"),
    (lambda m: m.add(m.ones(2), m.ones(2), foo=1), "add() got an unexpected keyword argument 'foo'"),
    (lambda m: m.nn.functional.relu(m.ones(2), 1, 2), "relu() takes from 1 to 2 positional arguments but 3 were given"),
    # one plausible overload of several: PyTorch's parser text (was an IndexError)
    (lambda m: m.sum(m.ones(2), 0, True, None, 5), "sum() takes from 2 to 3 positional arguments but 5 were given"),
    (lambda m: m.ones(2).sum(0, True, 4), "sum() takes from 1 to 2 positional arguments but 3 were given"),
]


@pytest.mark.parametrize("case,text", ARG_CASES)
def test_argument_errors_name_the_operator_like_torch(case, text):
    same_as_torch(case, TypeError, text)


def test_generated_functions_carry_their_public_names():
    assert tl.linalg.svd.__name__ == tl.linalg.svd.__qualname__ == "linalg_svd"
    assert tl._C._nn.gelu.__name__ == "gelu"
    assert tl.Tensor.add.__name__ == "add" and tl.Tensor.__add__.__name__ == "__add__"
    if torch is not None:
        assert tl.linalg.svd.__name__ == torch.linalg.svd.__name__
        assert tl._C._linalg.linalg_svdvals.__name__ == torch._C._linalg.linalg_svdvals.__name__
        assert tl.Tensor.add.__name__ == torch.Tensor.add.__name__


def test_methods_name_the_operator_in_pythons_errors():
    # PyTorch's parser counts without self ("mm() takes 1 positional argument
    # but 2 were given"); Python's own error counts self: only the name is matched
    t = tl.ones(2, 2)
    for fn, name in ((lambda: t.mm(t, 1), "mm"), (lambda: t.softmax(0, None, 5), "softmax"),
                     (lambda: t.add(t, foo=1), "add"), (lambda: t.transpose(0), "transpose")):
        typ, text = error_of(fn)
        assert typ is TypeError and text.startswith(f"{name}() "), text


# ------------------------------------------------ out= with requires_grad

AG = ": functions with out=... arguments don't support automatic differentiation, but one of the arguments requires grad."
RESIZE = "cannot resize variables that require grad"
LEAF = "a leaf Variable that requires grad is being used in an in-place operation."


def rg(m, *shape):
    return m.ones(*shape, requires_grad=True)


OUT_CASES = [
    # no tensor input: PyTorch's autograd fallback names the op by its schema name
    (lambda m: m.zeros(3, out=rg(m, 3)), "aten::zeros()" + AG),
    (lambda m: m.ones(3, out=rg(m, 3)), "aten::ones()" + AG),
    (lambda m: m.full((3,), 2.0, out=rg(m, 3)), "aten::full()" + AG),
    (lambda m: m.arange(3.0, out=rg(m, 3)), "aten::arange()" + AG),
    (lambda m: m.arange(0.0, 3.0, 1.0, out=rg(m, 3)), "aten::arange()" + AG),
    (lambda m: m.rand(3, out=rg(m, 3)), "aten::rand()" + AG),
    # tensor inputs: the generated autograd kernel's check, the base name
    (lambda m: m.add(m.ones(3), m.ones(3), out=rg(m, 3)), "add()" + AG),
    (lambda m: m.add(rg(m, 3), m.ones(3), out=m.ones(3)), "add()" + AG),
    (lambda m: m.exp(m.ones(3), out=rg(m, 3)), "exp()" + AG),
    (lambda m: m.mm(m.ones(2, 2), m.ones(2, 2), out=rg(m, 2, 2)), "mm()" + AG),
    # CompositeImplicit outs: the check PyTorch's decomposition meets
    (lambda m: m.matmul(m.ones(2, 2), m.ones(2, 2), out=rg(m, 2, 2)), "matmul()" + AG),
    (lambda m: m.matmul(m.ones(2), m.ones(2), out=rg(m, ())), "matmul()" + AG),
    (lambda m: m.matmul(rg(m, 2, 2), m.ones(2), out=m.ones(2)), "matmul()" + AG),
    (lambda m: m.linalg.svdvals(m.ones(2, 2), out=rg(m, 2)), "_linalg_svd()" + AG),
    (lambda m: m.linalg.svdvals(rg(m, 2, 2), out=m.ones(2)), "_linalg_svd()" + AG),
    (lambda m: m.linalg.matrix_norm(m.ones(2, 2), out=rg(m, ())), LEAF),
    (lambda m: m.linalg.matrix_norm(m.ones(2, 2), 2, out=rg(m, ())), LEAF),
    (lambda m: m.linalg.norm(m.ones(2, 2), out=rg(m, ())), LEAF),
    (lambda m: m.linalg.norm(m.ones(2, 2), "fro", out=rg(m, ())), LEAF),
    # through resize_, whose autograd kernel refuses even a right-sized out
    (lambda m: m.empty(3, out=rg(m, 3)), RESIZE),
    (lambda m: m.randn(3, out=rg(m, 3)), RESIZE),
    (lambda m: m.rand(3, generator=m.Generator(), out=rg(m, 3)), RESIZE),
    (lambda m: m.randn(3, generator=m.Generator(), out=rg(m, 3)), RESIZE),
]


@pytest.mark.parametrize("case,text", OUT_CASES)
def test_out_requires_grad_errors_like_torch(case, text):
    same_as_torch(case, RuntimeError, text)


def test_no_grad_and_inference_mode():
    for m in [tl] + ([torch] if torch is not None else []):
        with m.no_grad():
            assert error_of(lambda: m.empty(3, out=rg(m, 3))) == (RuntimeError, RESIZE)
            assert error_of(lambda: m.zeros(3, out=rg(m, 3))) == (None, "no error")
            for fn in (lambda: m.matmul(m.ones(2), m.ones(2), out=rg(m, ())),
                       lambda: m.linalg.svdvals(m.ones(2, 2), out=rg(m, 2)),
                       lambda: m.linalg.matrix_norm(m.ones(2, 2), out=rg(m, ()))):
                assert error_of(fn) == (None, "no error")  # out= checks need grad mode
        out = rg(m, 3)
        with m.inference_mode():
            assert m.randn(3, out=out) is out and tuple(out.shape) == (3,)


# ------------------------------------------------- dtype not implemented

DTYPE_CASES = [
    (lambda m: m.rand(3, dtype=m.int64), "\"check_uniform_bounds\" not implemented for 'Long'"),
    (lambda m: m.rand(3, dtype=m.bool), "\"check_uniform_bounds\" not implemented for 'Bool'"),
    (lambda m: m.rand(3, dtype=m.uint8), "\"check_uniform_bounds\" not implemented for 'Byte'"),
    (lambda m: m.randn(3, dtype=m.int64), "\"normal_kernel_cpu\" not implemented for 'Long'"),
    (lambda m: m.randn(2, 2, dtype=m.int32), "\"normal_kernel_cpu\" not implemented for 'Int'"),
    (lambda m: m.rand(3, out=m.empty(3, dtype=m.int64)), "\"check_uniform_bounds\" not implemented for 'Long'"),
    (lambda m: m.randn(3, out=m.empty(3, dtype=m.int16)), "\"normal_kernel_cpu\" not implemented for 'Short'"),
    (lambda m: m.arange(3, dtype=m.bool), "\"arange_cpu\" not implemented for 'Bool'"),
]


@pytest.mark.parametrize("case,text", DTYPE_CASES)
def test_dtype_not_implemented_is_not_implemented_error(case, text):
    same_as_torch(case, NotImplementedError, text)
