"""Operator schemas as Python sees them (``op._schema``, ``infer_schema``).

PyTorch's attribute names (``name`` "aten::add", ``overload_name``,
``arguments``, ``returns``, ``is_mutable``, ``alias_info``) over the
generator's own schema model (``codegen.schema``): one grammar and one
printer for schemas from native_functions.yaml, from ``Library.define`` and
from ``infer_schema``, so that every printed schema parses back to itself.
"""
from __future__ import annotations

from codegen.schema import BaseTy, SchemaParseError, parse_schema

__all__ = ["FunctionSchema", "Argument", "Return", "AliasInfo", "parse", "SchemaParseError"]


class AliasInfo:
    """``Tensor(a!)``: ``before_set == {'a'}``, ``is_write``."""

    __slots__ = ("is_write", "before_set", "after_set")

    def __init__(self, ann):
        self.is_write = ann.is_write
        self.before_set = set(ann.alias_set)
        self.after_set = set(ann.alias_set_after or ann.alias_set)

    def __repr__(self):
        return f"AliasInfo(before_set={self.before_set}, is_write={self.is_write})"


def _default_value(d):
    """The Python value of a schema default (``None`` for ``=None``; enum
    names such as ``contiguous_format`` or ``float32`` stay strings)."""
    if d is None:
        return None
    if d.kind == "list":
        return [_default_value(x) for x in d.value]
    return d.value


class Argument:
    __slots__ = ("name", "type", "real_type", "default_value", "has_default", "alias_info",
                 "kwarg_only", "is_out", "N", "_model")

    def __init__(self, a, kwarg_only: bool, is_out: bool):
        self._model = a
        self.name = a.name
        self.type = a.type                       # codegen.schema type: str() prints it
        self.real_type = a.type
        self.has_default = a.default is not None
        self.default_value = _default_value(a.default)
        self.alias_info = AliasInfo(a.annotation) if a.annotation is not None else None
        self.kwarg_only = kwarg_only
        self.is_out = is_out
        ll = a.type.is_list_like()
        self.N = ll.size if ll is not None else None

    def has_default_value(self) -> bool:
        return self.has_default

    @property
    def is_tensor_like(self) -> bool:
        return self.type.base is BaseTy.Tensor

    def __str__(self):
        return str(self._model)

    def __repr__(self):
        return f"Argument({self._model})"


class Return:
    __slots__ = ("name", "type", "alias_info", "_model")

    def __init__(self, r):
        self._model = r
        self.name = r.name or ""
        self.type = r.type
        self.alias_info = AliasInfo(r.annotation) if r.annotation is not None else None

    def __str__(self):
        return str(self._model)

    def __repr__(self):
        return f"Return({self._model})"


class FunctionSchema:
    """A parsed operator schema; ``str()`` prints the canonical text."""

    __slots__ = ("_model", "name", "overload_name", "arguments", "returns", "_text")

    def __init__(self, model):
        self._model = model
        n = model.name
        base = str(n.name)
        self.name = f"{n.namespace}::{base}" if n.namespace else base
        self.overload_name = n.overload_name
        a = model.arguments
        args = [Argument(x, False, False) for x in a.positional]
        args += [Argument(x, True, False) for x in a.kwarg_only]
        args += [Argument(x, True, True) for x in a.out]
        self.arguments = args
        self.returns = [Return(r) for r in model.returns]
        self._text = str(model)

    @property
    def is_mutable(self) -> bool:
        return any(a.alias_info is not None and a.alias_info.is_write for a in self.arguments)

    def __str__(self):
        return self._text

    def __repr__(self):
        return self._text

    def __eq__(self, other):
        return isinstance(other, FunctionSchema) and other._text == self._text

    def __hash__(self):
        return hash(self._text)


def caret_message(message: str, text: str, offset: int, hint: str | None = None) -> str:
    """PyTorch's parse-error layout: the message, the text, a caret under the fault."""
    s = f"{message} here:\n{text}\n{' ' * max(offset, 0)}~ <--- HERE"
    return s + (f"\n{hint}" if hint else "")


def parse(text: str, namespace: str | None = None) -> FunctionSchema:
    """Parse a full schema ("ns::name.overload(...) -> ..."); ``namespace`` is
    prefixed when the text has none. SchemaParseError on malformed text."""
    if namespace and "::" not in text.split("(", 1)[0]:
        text = f"{namespace}::{text.lstrip()}"
    return FunctionSchema(parse_schema(text))
