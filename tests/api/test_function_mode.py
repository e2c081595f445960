"""torchlet.overrides.TorchFunctionMode: what a mode sees, the stack rules
(popped while its handler runs, innermost first, per thread), errors, and that
with no mode the entry points pay only the `_TF` check.  Each behaviour is
also run on PyTorch where it is installed and compared."""
import threading

import numpy as np
import pytest

import torchlet
import torchlet.nn.functional as F
from torchlet._generated import _ops
from torchlet.overrides import (
    BaseTorchFunctionMode,
    TorchFunctionMode,
    _get_current_function_mode_stack,
    _pop_mode,
    _push_mode,
    handle_torch_function,
    has_torch_function,
    resolve_name,
)


def _log_mode(lib):
    class Log(lib.overrides.TorchFunctionMode):
        def __init__(self):
            self.log = []
            self.calls = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            self.log.append(func.__name__)
            self.calls.append((func.__name__, args, dict(kwargs)))
            return func(*args, **kwargs)

    return Log


def _seed(lib, F_):
    """RMSNorm, then a bias-free linear, then silu (the notes' seed program)."""
    lib.manual_seed(0)
    x = lib.randn(2, 8)
    w = lib.ones(8)
    W = lib.randn(4, 8)
    eps = 1e-6
    Log = _log_mode(lib)
    with Log() as m:
        h = x * lib.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w
        y = F_.silu(F_.linear(h, W))
    return m, y


SEED_LOG = ["pow", "mean", "add", "rsqrt", "mul", "mul", "linear", "silu"]


def test_seed_program_log():
    m, y = _seed(torchlet, F)
    assert m.log == SEED_LOG
    assert tuple(y.shape) == (2, 4)
    # what the calls looked like: the method's receiver is args[0]; keywords as written
    name, args, kwargs = m.calls[1]
    assert name == "mean" and args[1] == -1 and kwargs == {"keepdim": True}
    name, args, kwargs = m.calls[6]
    assert name == "linear" and len(args) == 2 and kwargs == {}   # bias left at its default: not passed


def test_seed_program_log_matches_pytorch():
    torch = pytest.importorskip("torch")
    m, _ = _seed(torch, torch.nn.functional)
    # PyTorch's F.silu is a Python function that passes inplace=False on to the
    # mode; its names are torchlet's (property getters are not in this program)
    assert m.log == SEED_LOG
    assert m.calls[7][2] == {"inplace": False}


def test_handler_result_is_the_result():
    class Swap(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            if func.__name__ == "add":
                return torchlet.sub(*args, **(kwargs or {}))
            return func(*args, **(kwargs or {}))

    a, b = torchlet.tensor([5.0]), torchlet.tensor([2.0])
    with Swap():
        assert (a + b).tolist() == [3.0]
        assert a.add(b).tolist() == [3.0]
        assert torchlet.add(a, b).tolist() == [3.0]
        assert (a * b).tolist() == [10.0]
    assert (a + b).tolist() == [7.0]


def test_enter_returns_mode_and_mode_is_popped_in_handler():
    seen = []

    class Probe(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append((list(_get_current_function_mode_stack()), torchlet._C._len_torch_function_stack()))
            return func(*args, **(kwargs or {}))

    mode = Probe()
    with mode as entered:
        assert entered is mode
        assert _get_current_function_mode_stack() == [mode]
        assert torchlet._C._len_torch_function_stack() == 1
        torchlet.ones(2).neg()
    # inside the handler the stack was empty, so the inner calls were not seen
    assert seen == [([], 0), ([], 0)]
    assert _get_current_function_mode_stack() == []


@pytest.mark.parametrize("lib_name", ["torchlet", "torch"])
def test_nesting_innermost_first(lib_name):
    lib = pytest.importorskip(lib_name)
    order = []

    class Tag(lib.overrides.TorchFunctionMode):
        def __init__(self, tag):
            self.tag = tag

        def __torch_function__(self, func, types, args=(), kwargs=None):
            order.append((self.tag, func.__name__))
            return func(*args, **(kwargs or {}))

    x = lib.ones(2)
    with Tag("outer"), Tag("inner"):
        lib.neg(x)
    assert order == [("inner", "neg"), ("outer", "neg")]
    # one instance entered twice sees the call twice
    order.clear()
    t = Tag("t")
    with t, t:
        lib.neg(x)
    assert order == [("t", "neg"), ("t", "neg")]


# what each operator dunder is reported as: PyTorch's own names ('__rdiv__' is
# PyTorch's name for its __rtruediv__, the same function)
DUNDER_CASES = [
    ("__add__", "add"), ("__radd__", "add"), ("__iadd__", "add_"), ("__sub__", "sub"), ("__rsub__", "__rsub__"),
    ("__isub__", "sub_"), ("__mul__", "mul"), ("__rmul__", "mul"), ("__imul__", "mul_"), ("__truediv__", "div"),
    ("__rtruediv__", "__rtruediv__"), ("__rdiv__", "__rdiv__"), ("__itruediv__", "div_"), ("__floordiv__", "__floordiv__"),
    ("__rfloordiv__", "__rfloordiv__"), ("__ifloordiv__", "floor_divide_"), ("__mod__", "remainder"),
    ("__rmod__", "__rmod__"), ("__imod__", "remainder_"), ("__pow__", "pow"), ("__rpow__", "__rpow__"),
    ("__ipow__", "pow_"), ("__matmul__", "matmul"), ("__rmatmul__", "__rmatmul__"), ("__and__", "__and__"),
    ("__rand__", "bitwise_and"), ("__iand__", "__iand__"), ("__or__", "__or__"), ("__ror__", "bitwise_or"),
    ("__ior__", "__ior__"), ("__xor__", "__xor__"), ("__rxor__", "bitwise_xor"), ("__ixor__", "__ixor__"),
    ("__lshift__", "__lshift__"), ("__rlshift__", "__rlshift__"), ("__ilshift__", "__ilshift__"),
    ("__rshift__", "__rshift__"), ("__rrshift__", "__rrshift__"), ("__irshift__", "__irshift__"),
    ("__eq__", "__eq__"), ("__ne__", "ne"), ("__lt__", "lt"), ("__le__", "le"), ("__gt__", "gt"), ("__ge__", "ge"),
]


def _dunder_log(lib, dunder):
    Log = _log_mode(lib)
    x = lib.ones(2, 2, dtype=lib.int64)
    y = x.to(lib.float64) if "truediv" in dunder else x.clone()
    other = x if "matmul" in dunder else 2
    if not hasattr(type(y), dunder):
        pytest.skip(f"{dunder} is not bound")
    with Log() as m:
        getattr(y, dunder)(other)
    return m.log


@pytest.mark.parametrize("dunder,name", DUNDER_CASES)
def test_dunder_names(dunder, name):
    assert _dunder_log(torchlet, dunder) == [name]


@pytest.mark.parametrize("dunder,name", DUNDER_CASES)
def test_dunder_names_match_pytorch(dunder, name):
    torch = pytest.importorskip("torch")
    want = _dunder_log(torch, dunder)
    assert want == (["__rdiv__"] if dunder == "__rtruediv__" else [name])


@pytest.mark.parametrize("expr,names", [
    (lambda x, f: -x, ["neg"]), (lambda x, f: abs(x), ["abs"]), (lambda x, f: ~(x > 0), ["gt", "__invert__"]),
    (lambda x, f: x[0], ["__getitem__"]), (lambda x, f: x.sum(), ["sum"]), (lambda x, f: x.to(torchlet.float64), ["to"]),
    (lambda x, f: torchlet.linalg.vector_norm(f), ["linalg_vector_norm"]),
    (lambda x, f: F.softmax(f, -1), ["softmax"]),
    (lambda x, f: torchlet.norm(f), ["norm"]), (lambda x, f: f.norm(), ["norm"]),
    (lambda x, f: torchlet.cat([f, f]), ["cat"]), (lambda x, f: x.nonzero(), ["nonzero"]),
    (lambda x, f: torchlet.nonzero(x, as_tuple=True), ["nonzero"]),
])
def test_other_entry_points(expr, names):
    Log = _log_mode(torchlet)
    x = torchlet.ones(2, 2, dtype=torchlet.int64)
    f = torchlet.ones(2, 2)
    with Log() as m:
        expr(x, f)
    assert m.log == names


def test_setitem_reported():
    Log = _log_mode(torchlet)
    x = torchlet.zeros(3)
    with Log() as m:
        x[1] = 2.0
    assert m.log == ["__setitem__"]
    assert x.tolist() == [0.0, 2.0, 0.0]


def test_not_implemented_is_a_type_error():
    class NI(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return NotImplemented

    x = torchlet.ones(2)
    mode = NI()
    with mode:
        with pytest.raises(TypeError) as e:
            torchlet.rsqrt(x)
        assert str(e.value).startswith("Multiple dispatch failed for 'torchlet.rsqrt'; all __torch_function__ "
                                       "handlers returned NotImplemented:\n\n  - mode object ")
        assert repr(mode) in str(e.value)
        with pytest.raises(TypeError, match="Multiple dispatch failed for 'torchlet.Tensor.add'"):
            x.add(x)
    assert _get_current_function_mode_stack() == []


def test_handler_exception_restores_stack():
    class Boom(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            raise KeyError("boom")

    with pytest.raises(KeyError):
        with Boom():
            torchlet.ones(1)
    assert _get_current_function_mode_stack() == []
    assert _ops._TF == 0


def test_push_pop_mode_and_errors():
    m = BaseTorchFunctionMode()
    _push_mode(m)
    try:
        assert torchlet._C._len_torch_function_stack() == 1
        assert torchlet._C._get_function_stack_at(0) is m
        assert torchlet._C._is_torch_function_mode_enabled()
        assert torchlet.ones(2).add(1).tolist() == [2.0, 2.0]  # the base mode runs everything unchanged
    finally:
        assert _pop_mode() is m
    with pytest.raises(RuntimeError, match="trying to pop from empty mode stack"):
        _pop_mode()


def test_disable_torch_function():
    Log = _log_mode(torchlet)
    with Log() as m:
        with torchlet._C.DisableTorchFunction():
            assert not torchlet._C._is_torch_function_enabled()
            torchlet.ones(1).neg()
        with torchlet._C.DisableTorchFunctionSubclass():   # no subclass handling in torchlet: modes still run
            torchlet.ones(1)
    assert m.log == ["ones"]


def test_handle_torch_function_for_user_functions():
    def my_op(x, scale=2.0):
        if has_torch_function((x,)):
            return handle_torch_function(my_op, (x,), x, scale=scale)
        return x * scale

    Log = _log_mode(torchlet)
    x = torchlet.ones(2)
    assert not has_torch_function((x,))
    with Log() as m:
        assert my_op(x).tolist() == [2.0, 2.0]
    assert m.log == ["my_op"]


def test_modes_are_per_thread():
    Log = _log_mode(torchlet)
    results = {}
    started, release = threading.Event(), threading.Event()

    def other():
        started.wait()
        Log2 = _log_mode(torchlet)
        with Log2() as m2:
            torchlet.ones(1)
        results["other_stack"] = _get_current_function_mode_stack()
        results["other_log"] = m2.log
        release.set()

    t = threading.Thread(target=other)
    t.start()
    with Log() as m:
        started.set()
        release.wait(10)
        torchlet.zeros(1)
    t.join()
    assert m.log == ["zeros"]          # the other thread's ones() was not seen here
    assert results == {"other_stack": [], "other_log": ["ones"]}


def test_no_mode_costs_one_check():
    """Each public generated entry point opens with the `_TF` check, which is
    0 whenever no thread has a mode (the whole cost of the feature then)."""
    assert _ops._TF == 0 and F._TF == 0
    fns = [getattr(_ops, n) for n in _ops.__all__]
    fns += [f for f in vars(_ops._TensorOps).values() if callable(f) and hasattr(f, "__code__")]
    assert len(fns) > 500
    for f in fns:
        assert f.__code__.co_names[:1] == ("_TF",), f.__name__
    Log = _log_mode(torchlet)
    with Log():
        assert _ops._TF == 1 and F._TF == 1
        with Log():
            assert _ops._TF == 2
    assert _ops._TF == 0


def test_results_unchanged_under_a_passthrough_mode(rng):
    x = rng.standard_normal((3, 5)).astype(np.float32)
    t = torchlet.tensor(x)
    plain = (t @ t.T + 1).softmax(-1)
    with BaseTorchFunctionMode():
        moded = (t @ t.T + 1).softmax(-1)
    np.testing.assert_array_equal(plain.numpy(), moded.numpy())


def test_resolve_name():
    torch = pytest.importorskip("torch")
    pairs = [(torchlet.Tensor.add, torch.Tensor.add), (torchlet.rsqrt, torch.rsqrt), (F.silu, torch.nn.functional.silu),
             (F.linear, torch.nn.functional.linear), (torchlet.linalg.vector_norm, torch.linalg.vector_norm),
             (torchlet.Tensor.__rsub__, torch.Tensor.__rsub__), (torchlet.zeros, torch.zeros)]
    for ours, theirs in pairs:
        assert resolve_name(ours) == torch.overrides.resolve_name(theirs).replace("torch.", "torchlet.", 1)
    assert resolve_name(lambda: 1) is None
