"""custom_op: schema inference, the kernels it registers, fake kernels,
register_kernel / set_kernel_enabled, mutation, aliasing, errors."""
from typing import List, Optional, Sequence

import numpy as np
import pytest

import torchlet as tl
from torchlet import Tensor, ops
from torchlet.library import custom_op, infer_schema


# ------------------------------------------------------------------ infer_schema

def test_infer_schema_table():
    def f(a: Tensor, b: Optional[Tensor], c: List[Tensor], d: list[Optional[Tensor]], e: int, g: float,
          h: bool, i: str, j: tl.dtype, k: tl.device, m: Sequence[int], n: Optional[list[float]],
          o: Optional[list[Tensor]], p: tuple[int, ...], q: "int | float", *, r: int = 3) -> tuple[Tensor, Tensor]:
        ...

    assert infer_schema(f, mutates_args=()) == (
        "(Tensor a, Tensor? b, Tensor[] c, Tensor?[] d, SymInt e, float g, bool h, str i, ScalarType j, "
        "Device k, SymInt[] m, float[]? n, Tensor[]? o, SymInt[] p, Scalar q, *, SymInt r=3) -> (Tensor, Tensor)")


def test_infer_schema_defaults_print_once_and_round_trip():
    def f(x: Tensor, eps: float = 1e-5, a: float = 1.0, dt: tl.dtype = tl.float32, d: tl.device = tl.device("cpu"),
          s: str = "hi", n: int = 3, b: bool = True, o: Optional[int] = None) -> Tensor:
        ...

    text = infer_schema(f, mutates_args=(), op_name="tcx::f")
    assert text == ('tcx::f(Tensor x, float eps=1e-05, float a=1.0, ScalarType dt=float32, Device d="cpu", '
                    'str s="hi", SymInt n=3, bool b=True, SymInt? o=None) -> Tensor')
    from torchlet._schema import parse
    assert str(parse(text)) == text


def test_infer_schema_returns_and_mutation():
    def f(x: Tensor, y: Tensor, xs: List[Tensor], z: Optional[Tensor]) -> None:
        ...

    assert infer_schema(f, mutates_args={"x"}) == "(Tensor(a0!) x, Tensor y, Tensor[] xs, Tensor? z) -> ()"
    assert infer_schema(f, mutates_args="unknown") == (
        "(Tensor(a0!) x, Tensor(a1!) y, Tensor(a2!)[] xs, Tensor(a3!)? z) -> ()")

    def g(x: Tensor) -> tuple[Tensor]:
        ...

    assert infer_schema(g, mutates_args=()) == "(Tensor x) -> Tensor"     # never ((Tensor))

    def h(x: Tensor) -> List[Tensor]:
        ...

    assert infer_schema(h, mutates_args=()).endswith("-> Tensor[]")


@pytest.mark.parametrize("fn_src, match", [
    ("def f(x) -> Tensor: ...", "Parameter x must have a type annotation"),
    ("def f(x: Tensor): ...", "No return type annotation was provided"),
    ("def f(x: Tensor, /) -> Tensor: ...", "positional-only args, varargs, or varkwargs"),
    ("def f(*xs: Tensor) -> Tensor: ...", "positional-only args, varargs, or varkwargs"),
    ("def f(x: Tensor, d: dict) -> Tensor: ...", "Parameter d has unsupported type dict"),
    ("def f(x: Tensor, t: tuple[int, float]) -> Tensor: ...", "Tuples of mixed types are not supported"),
    ("def f(x: Tensor, n: list = [1]) -> Tensor: ...", "Parameter n has unsupported type list"),
    ("def f(x: Tensor, n: int = [1]) -> Tensor: ...", "Parameter n has an unsupported default value type"),
    ("def f(x: Tensor) -> Optional[Tensor]: ...", "cannot return None sometimes"),
    ("def f(x: Tensor) -> str: ...", "Return type str is not supported"),
])
def test_infer_schema_refusals_are_one_line(fn_src, match):
    env = {"Tensor": Tensor, "Optional": Optional}
    exec(fn_src, env)
    with pytest.raises(ValueError, match=match) as e:
        infer_schema(env["f"], mutates_args=())
    assert str(e.value).startswith("infer_schema(func): ") and "\n" not in str(e.value)
    assert len(str(e.value)) < 400


def test_mutates_args_rules():
    def f(x: Tensor, n: int) -> None:
        ...

    with pytest.raises(ValueError, match="mutates_args must either be a sequence"):
        infer_schema(f, mutates_args="x")
    with pytest.raises(ValueError, match=r"\{'y'\} in mutates_args were not found"):
        infer_schema(f, mutates_args={"y"})
    with pytest.raises(ValueError, match="Parameter n is in mutable_args but only Tensors"):
        infer_schema(f, mutates_args={"n"})
    with pytest.raises(TypeError):
        custom_op("tcm::f", f)          # mutates_args is required


# ------------------------------------------------------------------ custom_op

def test_custom_op_basic_and_errors():
    with pytest.raises(ValueError, match="must look like 'namespace::op_name'"):
        custom_op("rms", mutates_args=())
    with pytest.raises(ValueError, match="kwarg-only Tensor args"):
        @custom_op("tcb::kw", mutates_args=())
        def kw(x: Tensor, *, y: Tensor) -> Tensor:
            return x + y
    with pytest.raises(ValueError, match="required to have a `device: torchlet.device` argument"):
        @custom_op("tcb::nodev", mutates_args=())
        def nodev(n: int) -> Tensor:
            return tl.zeros(n)

    @custom_op("tcb::scale", mutates_args=())
    def scale(x: Tensor, alpha: float = 2.0, *, bias: float = 0.0) -> Tensor:
        return x * alpha + bias

    x = tl.tensor([1.0, 2.0])
    assert scale(x).tolist() == [2.0, 4.0]
    assert scale(x, 3.0, bias=1.0).tolist() == [4.0, 7.0]
    assert ops.tcb.scale.default(x, alpha=0.5).tolist() == [0.5, 1.0]
    assert repr(scale) == "<CustomOpDef(tcb::scale)>"
    assert scale._opoverload is ops.tcb.scale.default
    assert tl.Tag.pt2_compliant_tag in ops.tcb.scale.default.tags
    # defining the same name again replaces the operator
    @custom_op("tcb::scale", mutates_args=())
    def scale2(x: Tensor) -> Tensor:
        return x * 10

    assert ops.tcb.scale(x).tolist() == [10.0, 20.0]


def test_schema_argument_must_agree_with_mutates_args():
    def f(x):
        x.add_(1)

    with pytest.raises(ValueError, match=r"The schema suggests that the op mutates \{'x'\}"):
        custom_op("tcs::f", f, mutates_args=(), schema="(Tensor(a!) x) -> ()")
    op = custom_op("tcs::g", f, mutates_args=["x"], schema="(Tensor(a!) x) -> ()")
    t = tl.zeros(2)
    op(t)
    assert t.tolist() == [1.0, 1.0]


def test_fake_kernel_and_meta():
    @custom_op("tcf::twice", mutates_args=())
    def twice(x: Tensor) -> Tensor:
        return tl.cat([x, x])

    m = tl.empty(3, 4, device="meta")
    with pytest.raises(RuntimeError, match=r"There was no fake impl registered for <CustomOpDef\(tcf::twice\)>"):
        twice(m)

    @twice.register_fake
    def _(x):
        return tl.empty((2 * x.shape[0],) + tuple(x.shape[1:]), device=x.device)

    r = twice(m)
    assert r.is_meta and r.shape == (6, 4)
    assert twice(tl.ones(2, 1)).shape == (4, 1)
    # get_ctx inside a fake kernel; data-dependent sizes have no shape environment here
    from torchlet.library import get_ctx
    from torchlet._library.fake_impl import DynamicOutputShapeException

    @custom_op("tcf::nz", mutates_args=())
    def nz(x: Tensor) -> Tensor:
        return x.nonzero()

    @nz.register_fake
    def _(x):
        n = get_ctx().new_dynamic_size()
        return tl.empty((n, x.dim()), dtype=tl.int64, device=x.device)

    with pytest.raises(DynamicOutputShapeException):
        nz(m)
    with pytest.raises(RuntimeError, match="only be called inside a fake kernel"):
        get_ctx()


def test_register_fake_on_library_ops():
    from torchlet.library import Library, register_fake
    with Library("tcfl", "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: x * 2, "CPU")
        register_fake("tcfl::f", lambda x: tl.empty_like(x), lib=lib)
        assert ops.tcfl.f(tl.empty(5, device="meta")).shape == (5,)
        with pytest.raises(RuntimeError, match="already has a fake impl registered at"):
            register_fake("tcfl::f", lambda x: x, lib=lib, allow_override=False)
        with pytest.raises(RuntimeError, match="operator tcfl::nope does not exist"):
            register_fake("tcfl::nope", lambda x: x, lib=lib)


def test_device_types_register_kernel_and_set_kernel_enabled():
    @custom_op("tcd::f", mutates_args=(), device_types="cpu")
    def f(x: Tensor) -> Tensor:
        return x + 1

    x = tl.zeros(2)
    assert f(x).tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="There was no fake impl registered"):
        f(tl.empty(2, device="meta"))

    @f.register_kernel("cpu")
    def _(x):
        return x + 100

    assert f(x).tolist() == [100.0, 100.0]
    with f.set_kernel_enabled("cpu", False):
        assert f(x).tolist() == [1.0, 1.0]
    assert f(x).tolist() == [100.0, 100.0]


def test_backend_select_for_factories():
    @custom_op("tcbs::make", mutates_args=())
    def make(n: int, device: tl.device) -> Tensor:
        return tl.arange(n, dtype=tl.float32, device=device)

    @make.register_fake
    def _(n, device):
        return tl.empty(n, device=device)

    assert make(3, tl.device("cpu")).tolist() == [0.0, 1.0, 2.0]
    m = make(4, "meta")
    assert m.is_meta and m.shape == (4,)


def test_mutation_bumps_versions_and_returns_nothing():
    @custom_op("tcmut::fill", mutates_args={"out"})
    def fill(out: Tensor, v: float) -> None:
        out.fill_(v)

    t = tl.zeros(3)
    v0 = t._version
    assert fill(t, 2.0) is None
    assert t.tolist() == [2.0, 2.0, 2.0] and t._version > v0
    # a mutating op returning nothing needs no fake kernel on meta
    assert fill(tl.empty(2, device="meta"), 1.0) is None
    # autograd's in-place checks see the new version
    w = tl.ones(3, requires_grad=True)
    y = w * 1.0
    z = y * y
    fill(y, 0.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_functional_op_may_not_return_an_input_or_a_view():
    @custom_op("tcal::bad", mutates_args=())
    def bad(x: Tensor) -> Tensor:
        return x

    @custom_op("tcal::view", mutates_args=())
    def view(x: Tensor) -> Tensor:
        return x[0]

    for op in (bad, view):
        with pytest.raises(RuntimeError, match=r"The output of this custom operator \(1\) must not also be an input"):
            op(tl.ones(2, 2))


def test_numpy_interop_inside_kernels(rng):
    @custom_op("tcnp::softplus", mutates_args=())
    def softplus(x: Tensor) -> Tensor:
        return tl.from_numpy(np.log1p(np.exp(x.numpy())))

    a = rng.standard_normal((3, 5)).astype(np.float32)
    np.testing.assert_allclose(softplus(tl.tensor(a)).numpy(), np.log1p(np.exp(a)), rtol=1e-6)


def test_against_pytorch_schemas():
    torch = pytest.importorskip("torch")

    def f(x: Tensor, w: Tensor, eps: float, n: int = 3, xs: Optional[List[Tensor]] = None) -> Tensor:
        ...

    def tf(x: torch.Tensor, w: torch.Tensor, eps: float, n: int = 3) -> torch.Tensor:
        ...

    ours = infer_schema(f, mutates_args={"w"})
    theirs = torch.library.infer_schema(tf, mutates_args={"w"})
    assert ours.startswith(theirs.split(") ->")[0])
