"""torchlet.return_types: the named tuples of operators whose schema names
their several results, like torch.return_types (``torchlet.max(x, 1)`` is a
``torchlet.return_types.max(values=..., indices=...)``). Built from the
schema's return names on first use; ``torchlet.return_types.max`` etc. are the
same classes once an operator has returned one."""
from __future__ import annotations

import collections

_TYPES: dict[str, type] = {}


def _repr(self) -> str:
    body = ",\n".join(f"{f}={v!r}" for f, v in zip(self._fields, self))
    return f"torchlet.return_types.{type(self).__name__}(\n{body})"


def get(name: str, fields: tuple[str, ...]) -> type:
    """The named tuple class `name` with `fields` (created once)."""
    t = _TYPES.get(name)
    if t is None or t._fields != tuple(fields):
        t = collections.namedtuple(name, fields)
        t.__module__ = __name__
        t.__repr__ = _repr
        _TYPES[name] = t
    return t


def __getattr__(name: str):
    try:
        return _TYPES[name]
    except KeyError:
        raise AttributeError(f"module 'torchlet.return_types' has no attribute '{name}'") from None


# the reductions' types exist before the first call (isinstance checks)
for _n in ("max", "min"):
    get(_n, ("values", "indices"))
