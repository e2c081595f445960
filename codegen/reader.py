"""Layer 1: read YAML keeping the position of every entry, key and value.

The file is composed into a node graph by libyaml (``yaml.CSafeLoader``; the
pure-Python loader is several times slower) and the nodes are converted into
plain Python values:

* mappings become :class:`YMap` (a ``dict``) that also records where the
  mapping, each key and each value start;
* sequences become :class:`YList` (a ``list``) with the position of each item;
* scalars become ``str``, ``bool``, ``int``, ``float`` or ``None``.

Positions are :class:`~codegen.diagnostics.Pos` (1-based line and column).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from .diagnostics import Diagnostic, DiagnosticSink, Pos

try:  # libyaml bindings; fall back to the pure-Python loader where missing
    _Base = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    _Base = yaml.SafeLoader  # type: ignore[misc]

_STR_TAG = "tag:yaml.org,2002:str"
# YAML 1.1 words that resolve to booleans or null (PyYAML's implicit resolvers)
_BOOL_WORDS = {w for b in ("yes", "no", "true", "false", "on", "off") for w in (b, b.capitalize(), b.upper())}
_NULL_WORDS = {"~", "null", "Null", "NULL"}
# first characters of plain scalars that may be numbers (or merge/value keys)
_MAYBE_NUMBER = set("0123456789+-.=<")


class _Loader(_Base):  # type: ignore[misc,valid-type]
    """libyaml's loader with a fast path in implicit tag resolution.

    Most plain scalars (schemas, kernel names, formulas) are strings: YAML
    1.1's boolean and null words are looked up in a set, and only scalars
    whose first character could start a number go through PyYAML's
    regular expressions.
    """

    def resolve(self, kind, value, implicit):  # type: ignore[no-untyped-def]
        if kind is yaml.ScalarNode and implicit[0] and value and value[0] not in _MAYBE_NUMBER:
            if value in _BOOL_WORDS:
                return "tag:yaml.org,2002:bool"
            if value in _NULL_WORDS:
                return "tag:yaml.org,2002:null"
            return _STR_TAG
        return super().resolve(kind, value, implicit)


def node_pos(path: str, node: yaml.Node) -> Pos:
    """The position of a composed YAML node."""
    m = node.start_mark
    shift = False
    quote = 0
    if isinstance(node, yaml.ScalarNode) and node.end_mark.line == m.line:
        if not node.style:
            shift = True
        elif node.style in ("'", '"'):
            # escapes break the one-to-one mapping; only shift when absent
            shift = "\\" not in node.value and "'" not in node.value
            quote = 1
    return Pos(path, m.line + 1, m.column + 1, shift, quote)


class _Where:
    """Positions kept as YAML nodes and turned into :class:`Pos` on demand
    (most are never needed: only diagnostics ask for them)."""

    __slots__ = ()

    def _pos(self, where: Any) -> Pos:
        return where if isinstance(where, Pos) else node_pos(self.path, where)  # type: ignore[attr-defined]


class YMap(dict, _Where):
    """A YAML mapping: ``dict`` of key -> value plus source positions."""

    __slots__ = ("path", "_where", "key_pos", "value_pos")

    def __init__(self, pos: Pos | yaml.Node, path: str = ""):
        self.path = path or getattr(pos, "path", "")
        self._where = pos
        self.key_pos: dict[Any, Any] = {}  # key -> Pos or node
        self.value_pos: dict[Any, Any] = {}

    @property
    def pos(self) -> Pos:
        return self._pos(self._where)

    def kpos(self, key: Any) -> Pos:
        w = self.key_pos.get(key)
        return self.pos if w is None else self._pos(w)

    def vpos(self, key: Any) -> Pos:
        w = self.value_pos.get(key)
        return self.pos if w is None else self._pos(w)


class YList(list, _Where):
    """A YAML sequence: ``list`` plus the position of each item."""

    __slots__ = ("path", "_where", "item_pos")

    def __init__(self, pos: Pos | yaml.Node, path: str = ""):
        self.path = path or getattr(pos, "path", "")
        self._where = pos
        self.item_pos: list[Any] = []  # Pos or node per item

    @property
    def pos(self) -> Pos:
        return self._pos(self._where)

    def ipos(self, i: int) -> Pos:
        return self._pos(self.item_pos[i]) if i < len(self.item_pos) else self.pos


_BOOL_TRUE = {"true", "yes", "on"}
_TAG = "tag:yaml.org,2002:"


def _scalar(node: yaml.ScalarNode) -> Any:
    tag = node.tag
    v = node.value
    if tag == _STR_TAG:
        return v
    if tag == _TAG + "bool":
        return v.lower() in _BOOL_TRUE
    if tag == _TAG + "int":
        try:
            return int(v.replace("_", ""), 0)
        except ValueError:
            return v
    if tag == _TAG + "float":
        try:
            return float(v.replace("_", ""))
        except ValueError:
            return v
    if tag == _TAG + "null":
        return None
    return v


class _Converter:
    def __init__(self, path: str, sink: DiagnosticSink):
        self.path = path
        self.sink = sink

    def convert(self, node: yaml.Node) -> Any:
        cls = type(node)
        if cls is yaml.ScalarNode:
            return node.value if node.tag == _STR_TAG else _scalar(node)
        path = self.path
        if cls is yaml.SequenceNode:
            lst = YList(node, path)
            lst.extend(self.convert(item) for item in node.value)
            lst.item_pos = list(node.value)
            return lst
        if cls is yaml.MappingNode:
            out = YMap(node, path)
            kp, vp = out.key_pos, out.value_pos
            for knode, vnode in node.value:
                key = knode.value if type(knode) is yaml.ScalarNode and knode.tag == _STR_TAG else self.convert(knode)
                if isinstance(key, (YMap, YList)):
                    self.sink.error(node_pos(path, knode), "mapping keys must be plain scalars")
                    continue
                if key in out:
                    self.sink.error(
                        node_pos(path, knode),
                        f"duplicate key '{key}'",
                        f"the first '{key}' is on line {out.kpos(key).line}",
                    )
                    continue
                v = vnode.value if type(vnode) is yaml.ScalarNode and vnode.tag == _STR_TAG else self.convert(vnode)
                out[key] = v
                kp[key] = knode
                vp[key] = vnode
            return out
        raise AssertionError(f"unexpected YAML node {node!r}")  # pragma: no cover


def load_yaml(path: str | Path, sink: DiagnosticSink, display: str | None = None) -> Any:
    """Read ``path``; on failure add a diagnostic and return None.

    ``display`` is the path printed in diagnostics (default: ``str(path)``).
    """
    shown = display if display is not None else str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        sink.error(Pos(shown, 1, 1), f"cannot read file: {e.strerror or e}")
        return None
    return load_yaml_text(text, shown, sink)


def load_yaml_text(text: str, path: str, sink: DiagnosticSink) -> Any:
    try:
        node = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        msg = e.problem or "malformed YAML"
        if e.context:
            msg = f"{msg} ({e.context})"
        sink.diagnostics.append(Diagnostic(path, line, col, f"invalid YAML: {msg}"))
        return None
    except yaml.YAMLError as e:
        sink.diagnostics.append(Diagnostic(path, 1, 1, f"invalid YAML: {e}"))
        return None
    if node is None:
        return None
    return _Converter(path, sink).convert(node)


def type_name(value: Any) -> str:
    """How a YAML value is described in diagnostics."""
    if isinstance(value, YMap) or isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if value is None:
        return "null"
    return "a string"
