"""``infer_schema``: an operator schema from a Python function's annotations
(PyTorch's table), printed by the generator's one schema printer.

Beyond PyTorch: ``tuple[T, ...]`` parameters become ``T[]``, and
``Optional[list[Tensor]]`` becomes ``Tensor[]?``; a refusal is one line
that says what to write instead.
"""
from __future__ import annotations

import inspect
import numbers
import types
import typing

from .. import _device as _dev
from .. import _dtype as _dt
from .. import _schema as _sch
from .._tensor import Tensor

_NoneType = type(None)


class _Refusal(ValueError):
    pass


def _is_number_union(args) -> bool:
    return set(args) <= {int, float, bool, complex} and len(args) >= 2


def _is_union(ann) -> bool:
    origin = typing.get_origin(ann)
    return origin is typing.Union or origin is types.UnionType


def _strip_optional(ann):
    """(inner, optional?) for Optional[T] / T | None."""
    if _is_union(ann):
        args = typing.get_args(ann)
        if _NoneType in args:
            rest = tuple(a for a in args if a is not _NoneType)
            if len(rest) == 1:
                return rest[0], True
            if _is_number_union(rest):
                return typing.Union[rest], True
    return ann, False


def _base(ann) -> str | None:
    if ann is Tensor or (isinstance(ann, type) and issubclass(ann, Tensor)):
        return "Tensor"
    if ann is int:
        return "SymInt"
    if ann is float:
        return "float"
    if ann is bool:
        return "bool"
    if ann is str:
        return "str"
    if ann is _dt.dtype:
        return "ScalarType"
    if ann is _dev.device:
        return "Device"
    if ann is numbers.Number or ann is complex:
        return "Scalar"
    if _is_union(ann) and _is_number_union(typing.get_args(ann)):
        return "Scalar"
    return None


def _elem_of_list(ann):
    """The element type of list[T] / List[T] / Sequence[T] / tuple[T, ...] / tuple[T, T], else None."""
    import collections.abc
    origin = typing.get_origin(ann)
    if origin in (list, collections.abc.Sequence):
        args = typing.get_args(ann)
        return args[0] if len(args) == 1 else None
    if origin is tuple:
        args = typing.get_args(ann)
        if len(args) == 2 and args[1] is Ellipsis:
            return args[0]
        if args and all(a == args[0] for a in args):
            return args[0]
    return None


def param_type(ann, name: str) -> str:
    """The schema type of a parameter annotation (a _Refusal says why not)."""
    inner, opt = _strip_optional(ann)
    b = _base(inner)
    if b is not None:
        return b + ("?" if opt else "")
    elem = _elem_of_list(inner)
    if elem is not None:
        e_inner, e_opt = _strip_optional(elem)
        eb = _base(e_inner)
        if eb in ("Tensor", "SymInt", "float", "bool", "Scalar"):
            if e_opt and eb != "Tensor":
                raise _Refusal(f"Parameter {name} has unsupported type {_ann_str(ann)}: only lists of "
                               f"Optional[Tensor] may hold None; use list[{_PY_NAMES.get(eb, eb)}] instead.")
            return eb + ("?" if e_opt else "") + "[]" + ("?" if opt else "")
        raise _Refusal(f"Parameter {name} has unsupported type {_ann_str(ann)}: list elements must be "
                       f"Tensor, Optional[Tensor], int, float, bool or a number; use one of those.")
    hint = ""
    if typing.get_origin(inner) is dict or inner is dict:
        hint = " Dicts are not supported; pass the values as separate arguments or as a list."
    elif typing.get_origin(inner) is tuple or inner is tuple:
        hint = " Tuples of mixed types are not supported; use list[T] for one element type."
    raise _Refusal(f"Parameter {name} has unsupported type {_ann_str(ann)}. Use Tensor, int, float, bool, str, "
                   f"a number, torchlet.dtype, torchlet.device, Optional[...] or list[...] of those.{hint}")


_PY_NAMES = {"SymInt": "int", "Scalar": "Number"}   # schema type -> the annotation that gives it


def _ann_str(ann) -> str:
    if isinstance(ann, type):
        return ann.__name__
    return str(ann).replace("typing.", "").replace("torchlet._tensor.", "")


def return_type(ann) -> str:
    """The schema returns of a return annotation."""
    if ann is None or ann is _NoneType:
        return "()"
    if typing.get_origin(ann) is tuple:
        args = typing.get_args(ann)
        if len(args) == 2 and args[1] is Ellipsis:
            raise _Refusal("Return type tuple[T, ...] has no fixed length; return list[Tensor] instead.")
        return "(" + ", ".join(_one_return(a) for a in args) + ")"
    return _one_return(ann)


def _one_return(ann) -> str:
    inner, opt = _strip_optional(ann)
    if opt:
        raise _Refusal(f"Return type {_ann_str(ann)} is not supported: an operator cannot return None "
                       f"sometimes; return a Tensor (e.g. an empty one) instead.")
    b = _base(inner)
    if b in ("Tensor", "SymInt", "float", "bool", "Scalar"):
        return b
    elem = _elem_of_list(inner)
    if elem is not None and _base(elem) == "Tensor":
        return "Tensor[]"
    raise _Refusal(f"Return type {_ann_str(ann)} is not supported. Return Tensor, list[Tensor], int, float, "
                   f"bool, a number, None or a tuple of those.")


def _default_text(v, name: str) -> str:
    if v is None:
        return "None"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, _dt.dtype):
        return str(v).replace("torchlet.", "")
    if isinstance(v, _dev.device):
        return f'"{v}"'
    raise _Refusal(f"Parameter {name} has an unsupported default value type {type(v)}. Use None, an int, "
                   f"float, bool, str, torchlet.dtype or torchlet.device default.")


def _resolve_annotations(fn):
    try:
        return typing.get_type_hints(fn)
    except Exception:  # noqa: BLE001 - fall back to the raw annotations
        return getattr(fn, "__annotations__", {})


def infer_schema(prototype_function, /, *, mutates_args, op_name: str | None = None, tags=()) -> str:
    """The schema of ``prototype_function`` from its annotations:
    ``"(Tensor x, float eps) -> Tensor"``, prefixed by ``op_name`` when given."""
    sig = inspect.signature(prototype_function)

    def error(msg):
        raise ValueError(f"infer_schema(func): {msg} Got func with signature {sig})")

    hints = _resolve_annotations(prototype_function)
    names = list(sig.parameters)
    if mutates_args != "unknown":
        if isinstance(mutates_args, str):
            raise ValueError("mutates_args must either be a sequence of the names of the arguments that are "
                             "mutated or the string 'unknown'. ")
        mutated = set(mutates_args)
        missing = mutated - set(names)
        if missing:
            raise ValueError(f"{missing} in mutates_args were not found in the custom op's signature. "
                             f"mutates_args should contain the names of all args that the custom op mutates, "
                             f"or just the string 'unknown' if you don't know.")
    parts = []
    seen_kw = False
    for idx, (name, p) in enumerate(sig.parameters.items()):
        if p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            error("We do not support positional-only args, varargs, or varkwargs.")
        if p.kind == p.KEYWORD_ONLY and not seen_kw:
            parts.append("*")
            seen_kw = True
        if name not in hints:
            error(f"Parameter {name} must have a type annotation.")
        try:
            t = param_type(hints[name], name)
            if p.default is not inspect.Parameter.empty:
                d = _default_text(p.default, name)
            else:
                d = None
        except _Refusal as e:
            error(str(e))
        is_tensorish = t.startswith("Tensor")
        write = mutates_args == "unknown" and is_tensorish or (mutates_args != "unknown" and name in mutated)
        if write:
            if not is_tensorish:
                error(f"Parameter {name} is in mutable_args but only Tensors or collections of Tensors can "
                      f"be mutated")
            t = f"Tensor(a{idx}!)" + t[len("Tensor"):]
        parts.append(f"{t} {name}" + (f"={d}" if d is not None else ""))
    if "return" not in hints:
        error("No return type annotation was provided. Please add one.")
    try:
        rets = return_type(hints["return"])
    except _Refusal as e:
        error(str(e))
    text = f"({', '.join(parts)}) -> {rets}"
    # one printer: parse and print back (canonical text; raises on anything the grammar refuses)
    canonical = str(_sch.parse(f"{op_name or 'f'}{text}"))
    return canonical if op_name else canonical[canonical.index("("):]
