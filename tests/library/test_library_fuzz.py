"""Random schemas, annotations and registration sequences thrown at
torchlet.library: only the documented exceptions escape, and afterwards the
dispatcher holds exactly the surviving registrations (its tables equal a
recomputation, each operator's registration list is the model's, and calls
run the kernel the model predicts)."""
import itertools
import typing

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import torchlet as tl
from torchlet import ops
from torchlet._C import lib as C
from torchlet._schema import parse
from torchlet.library import Library, infer_schema

_ns_counter = itertools.count()

TYPES = ["Tensor", "Tensor?", "Tensor[]", "int", "int[]", "int[2]", "SymInt", "float", "float?", "bool", "str",
         "Scalar", "ScalarType?", "Device", "Tensor(a!)", "Tensor(a)", "Layout?", "Tensr", "int[", "?", ""]
DEFAULTS = ["", "=1", "=None", "=1.5", "=True", "='x'", "=[1, 2]", "=float32", "=", "=-3"]
RETURNS = ["Tensor", "()", "(Tensor, Tensor)", "Tensor[]", "int", "float", "(Tensor a, Tensor b)", "Tensor(a!)",
           "bogus", "(Tensor,", ""]
NAMES = ["x", "y", "self", "out", "dim", "alpha", "x", "1x", "*"]


@st.composite
def schemas(draw):
    n = draw(st.integers(0, 4))
    args = []
    for _ in range(n):
        t = draw(st.sampled_from(TYPES))
        name = draw(st.sampled_from(NAMES))
        args.append(name if name == "*" else f"{t} {name}{draw(st.sampled_from(DEFAULTS))}")
    name = draw(st.sampled_from(["f", "f.over", "g", "f_", "f.1", "", "a::f"]))
    text = f"{name}({', '.join(args)}) -> {draw(st.sampled_from(RETURNS))}"
    if draw(st.booleans()):   # a random edit of one character
        i = draw(st.integers(0, len(text)))
        text = text[:i] + draw(st.sampled_from("()[],?!*=-> x")) + text[i + 1:]
    return text


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schemas())
def test_random_schemas(text):
    ns = f"tlfz{next(_ns_counter)}"
    with Library(ns, "DEF") as lib:
        try:
            name = lib.define(text)
        except (RuntimeError, ValueError):
            assert C.tl_dispatch_check_invariants() == 0
            return
        op = getattr(getattr(ops, ns), name.split(".")[0])
        ov = getattr(op, name.split(".")[1] if "." in name else "default")
        printed = str(ov._schema)
        assert str(parse(printed)) == printed          # one printer, round-tripping
        assert printed.startswith(f"{ns}::")
    assert not hasattr(getattr(ops, ns), name.split(".")[0])


ANNOTATIONS = [tl.Tensor, typing.Optional[tl.Tensor], list[tl.Tensor], int, float, bool, str, tl.dtype, tl.device,
               list[int], typing.Optional[int], tuple[int, ...], dict, tuple[int, str], set, object, "Tensor",
               list[typing.Optional[tl.Tensor]], typing.Optional[list[tl.Tensor]], typing.Union[int, float], bytes]
RET_ANNOTATIONS = [tl.Tensor, None, tuple[tl.Tensor, tl.Tensor], list[tl.Tensor], int, float, str,
                   typing.Optional[tl.Tensor], tuple[tl.Tensor, ...], dict]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(ANNOTATIONS), max_size=4), st.sampled_from(RET_ANNOTATIONS),
       st.sets(st.integers(0, 4)), st.booleans())
def test_random_annotations(anns, ret, mutated, unknown):
    params = ", ".join(f"a{i}" for i in range(len(anns)))
    env = {}
    exec(f"def f({params}): pass", env)
    f = env["f"]
    f.__annotations__ = {f"a{i}": a for i, a in enumerate(anns)}
    f.__annotations__["return"] = ret
    mutates = "unknown" if unknown else {f"a{i}" for i in mutated}
    try:
        text = infer_schema(f, mutates_args=mutates)
    except ValueError as e:
        assert "\n" not in str(e)
        return
    assert str(parse("x::f" + text)) == "x::f" + text


ACTIONS = st.lists(st.tuples(st.sampled_from(["impl", "impl", "impl", "destroy", "fallthrough"]),
                             st.integers(0, 2), st.sampled_from(["CPU", "Meta", "CompositeExplicitAutograd",
                                                                  "CompositeImplicitAutograd", "AutogradCPU"])),
                   min_size=1, max_size=12)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ACTIONS)
def test_random_registration_sequences(actions):
    ns = f"tlfr{next(_ns_counter)}"
    base = Library(ns, "DEF")
    base.define("f(Tensor x) -> Tensor")
    libs = [Library(ns, "FRAGMENT") for _ in range(3)]
    model = []          # surviving registrations, oldest first: (library index, key, marker)
    marker = itertools.count(1)
    try:
        for action, li, key in actions:
            if action == "destroy":
                libs[li]._destroy()
                libs[li] = Library(ns, "FRAGMENT")
                model = [r for r in model if r[0] != li]
            elif action == "fallthrough":
                if key in ("CompositeExplicitAutograd", "CompositeImplicitAutograd"):
                    continue
                from torchlet.library import fallthrough_kernel
                if key == "Meta" and any(r[1] == "CompositeImplicitAutograd" for r in model):
                    with pytest.raises(RuntimeError, match="should not register a meta kernel"):
                        libs[li].impl("f", fallthrough_kernel, key)
                    continue
                libs[li].impl("f", fallthrough_kernel, key)
                model.append((li, key, None))
            else:
                m = next(marker)
                if key == "Meta" and any(r[1] == "CompositeImplicitAutograd" for r in model):
                    with pytest.raises(RuntimeError, match="should not register a meta kernel"):
                        libs[li].impl("f", _kernel(m), key)
                    continue
                libs[li].impl("f", _kernel(m), key)
                model.append((li, key, m))
            assert C.tl_dispatch_check_invariants() == 0
        # the operator's registrations are exactly the model's, newest first
        text = tl._dispatch._text(C.tl_op_dump_registrations, ops.__getattr__(ns).f.default._op)
        lines = [ln for ln in text.splitlines() if ln]
        expect = [f"{k}: {'fallthrough fallthrough registered from Python' if m is None else f'k{m} (Python kernel)'}"
                  for _, k, m in reversed(model)]
        assert lines == expect
        # a CPU call runs the newest CPU-capable kernel the model predicts
        got = _call_marker(ns)
        assert got == _expected_cpu_marker(model)
    finally:
        for lb in libs:
            lb._destroy()
        base._destroy()
    assert C.tl_dispatch_check_invariants() == 0


def _kernel(m):
    def k(x):
        return tl.full((1,), float(m))
    k.__name__ = f"k{m}"
    return k


def _call_marker(ns):
    try:
        with tl.no_grad():
            return int(getattr(ops, ns).f(tl.zeros(1)).item())
    except NotImplementedError:
        return None


def _expected_cpu_marker(model):
    """The kernel a no-grad CPU call runs: the CPU key's newest registration
    when it is a kernel; otherwise (none, or a fallthrough: the call then lands
    in the no-key slot, which the composites fill as well) the newest
    CompositeExplicitAutograd kernel, else the newest CompositeImplicitAutograd one."""
    def newest(key):
        for _, k, m in reversed(model):
            if k == key:
                return ("set", m)
        return None
    cpu = newest("CPU")
    if cpu is not None and cpu[1] is not None:
        return cpu[1]
    for key in ("CompositeExplicitAutograd", "CompositeImplicitAutograd"):
        hit = newest(key)
        if hit is not None:
            return hit[1]
    return None
