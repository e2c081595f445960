"""``torchlet.ops``: Python handles to the rows of the dispatcher's operator table.

    torchlet.ops.aten.add                  OpOverloadPacket (every overload of aten::add)
    torchlet.ops.aten.add.Tensor           OpOverload (aten::add.Tensor)
    torchlet.ops.aten.sin.default          the overload with the empty name

Namespaces are made on attribute access; packets and overloads are cached
and unique (``ops.aten.add.Tensor is ops.aten.add.Tensor``). They cover every
operator the dispatcher knows, the generated aten ones and those defined at
run time (``torchlet.library``) alike.

Calling an OpOverload converts its arguments by the schema (``_boxing``) and
makes one boxed call through the whole dispatcher (``tl_op_call_flat``): every
key, Python kernels and fallbacks included, is honoured, as for a binding.

Calling a packet picks an overload by one documented rule (``resolve``):
the candidates are the overloads whose schema accepts the arguments (count,
names, and every value converts); among them, the ones where every value is
of its argument's own Python type ("exact") come first; within a tier the
overload that leaves the fewest arguments to their defaults wins; a tie is
an error naming the candidates. ``packet.resolve(*args, **kwargs)`` returns
the choice without calling it.
"""
from __future__ import annotations

import threading
import types

from . import _boxing
from . import _schema as _sch
from ._C import ffi, lib
from ._errors import check_status, pending_result
from ._tensor import Tensor

_new = Tensor.__new__
_adopt = None           # torchlet._subclass.wrap once a tensor subclass instance exists

__all__ = ["ops", "OpOverload", "OpOverloadPacket"]

_lock = threading.RLock()
_index: dict[str, list[str]] = {}     # "ns::name" -> overload names, definition order
_scanned = 0                          # operators of the C table already indexed
_packets: dict[str, "OpOverloadPacket"] = {}
_generation = 0                       # moves whenever an operator is defined or removed

_ENUM_INTS = {"Mean": 1, "Sum": 2, "None": 0}   # at::Reduction, as int defaults


def _scan() -> None:
    """Index the operators defined since the last scan (cheap: new ones only)."""
    global _scanned
    with _lock:
        n = lib.tl_dispatch_num_operators()
        for i in range(_scanned, n):
            op = lib.tl_dispatch_operator_at(i)
            name = ffi.string(lib.tl_op_name(op)).decode()
            base, _, overload = name.partition(".")
            lst = _index.setdefault(base, [])
            if overload not in lst:
                lst.append(overload)
        _scanned = n


def _c_op(qualname: str):
    """The C handle of a defined operator ("ns::name.overload"), or NULL."""
    op = lib.tl_op_find(qualname.encode())
    if op == ffi.NULL:
        lib.tl_clear_error()
    return op


def _defined_overloads(base: str) -> list[str]:
    _scan()
    return [o for o in _index.get(base, ()) if _c_op(f"{base}.{o}" if o else base) != ffi.NULL]


# the arguments of a call do not fit a schema: PyTorch raises a plain RuntimeError
# (_bind raises nothing else, so resolve() may catch it)
_BindError = RuntimeError


def _default_of(arg):
    """A schema default as the Python value its packer takes."""
    d = arg.default_value
    if isinstance(d, str) and arg.type.base.name in ("int", "SymInt") and d in _ENUM_INTS:
        return _ENUM_INTS[d]
    if isinstance(d, str) and arg.type.base.name == "ScalarType":
        import torchlet
        # a schema names a dtype by PyTorch's spelling (`dtype=long`): torchlet's namespace has its aliases
        return getattr(torchlet, d)
    return d


class OpOverload:
    """One operator overload: ``aten.add.Tensor``."""

    def __init__(self, packet: "OpOverloadPacket", overload: str, c_op):
        self.overloadpacket = packet
        self._overloadname = overload or "default"
        self._opname = packet._opname
        self.namespace = packet._ns
        self._qualname = f"{packet._qualified_op_name}.{overload}" if overload else packet._qualified_op_name
        self._op = c_op
        self._schema = _sch.parse(ffi.string(lib.tl_op_schema(c_op)).decode(), self.namespace)
        nat = packet._qualified_op_name in _boxing.NUMBERS_AS_TENSORS
        self._specs = []
        self._unboxable = None
        try:
            for a in self._schema.arguments:
                self._specs.append((a.name, _boxing.packer(a.type, nat), a.has_default, _default_of(a), a.type))
        except NotImplementedError as e:
            self._unboxable = str(e)
        self._nargs = len(self._schema.arguments)
        rets = self._schema.returns
        self._one_tensor = len(rets) == 1 and str(rets[0].type) == "Tensor"
        self._names = {s[0] for s in self._specs}
        fast = None if self._unboxable is not None else _boxing.fast_caller(
            self._specs, c_op, self._nargs, self._one_tensor, self._call_stack)
        if fast is not None:   # the caller is __call__ itself: no extra Python frame per call
            self.__class__ = type("OpOverload", (OpOverload,), {"__call__": fast, "__module__": __name__})
        self.__name__ = f"{self._opname}.{self._overloadname}"
        self.__qualname__ = self.__name__
        self.__module__ = f"torchlet.ops.{self.namespace}"

    # -- identity and text
    def name(self) -> str:
        return self._qualname

    def __str__(self):
        return f"{self.namespace}.{self._opname}.{self._overloadname}"

    def __repr__(self):
        return f"<OpOverload(op='{self.namespace}.{self._opname}', overload='{self._overloadname}')>"

    def __hash__(self):
        return id(self)

    @property
    def tags(self):
        from ._tags import tags_of
        return tags_of(self._qualname)

    @property
    def is_view(self) -> bool:
        return any(r.alias_info is not None and not r.alias_info.is_write for r in self._schema.returns)

    # -- dispatcher introspection
    def has_kernel_for_dispatch_key(self, key) -> bool:
        from ._dispatch import _key
        return bool(lib.tl_op_has_registration(self._op, _key(key)))

    def _dispatch_table(self) -> str:
        from ._dispatch import _text
        return _text(lib.tl_op_dump_table, self._op)

    # -- calling
    def _bind(self, args, kwargs):
        """The flat streams of one call (_BindError when the arguments do not fit)."""
        if self._unboxable is not None:
            raise NotImplementedError(f"{self._qualname}: {self._unboxable}")
        specs = self._specs
        n = len(args)
        if n > self._nargs:
            raise _BindError(f"{self._schema.name}() expected at most {self._nargs} argument(s) but "
                            f"received {n} argument(s). Declaration: {self._schema}")
        s = ([], [], [], [], [], [])
        used = 0
        for i, (name, pack, has_default, default, typ) in enumerate(specs):
            if i < n:
                v = args[i]
                if kwargs and name in kwargs:
                    raise _BindError(f"{self._schema.name}() got multiple values for argument '{name}'. "
                                     f"Declaration: {self._schema}")
            elif kwargs and name in kwargs:
                v = kwargs[name]
                used += 1
            elif has_default:
                v = default
            else:
                raise _BindError(f"{self._schema.name}() is missing value for argument '{name}'. "
                                f"Declaration: {self._schema}")
            if not pack(v, s):
                raise _BindError(
                    f"{self._schema.name}() Expected a value of type '{typ}' for argument '{name}' but "
                    f"instead found type '{_boxing.type_name(v)}'.\nPosition: {i}\nValue: {v!r}\n"
                    f"Declaration: {self._schema}\nCast error details: Unable to cast {v!r} to {typ}")
        if kwargs and used != len(kwargs):
            bad = sorted(k for k in kwargs if k not in self._names)
            raise _BindError(f"Unknown keyword argument '{bad[0]}' for operator '{self._schema.name}'. "
                             f"Schema: {self._schema}")
        return s

    def __call__(self, /, *args, **kwargs):
        # an overload with a fast caller has it as its class's __call__ (see __init__)
        return self._general(args, kwargs)

    def _general(self, args, kwargs):
        """The general path: every type the boxed convention carries, PyTorch's errors."""
        s = self._bind(args, kwargs)
        if self._one_tensor:
            h = lib.tl_op_call_flat_tensor(self._op, s[0], self._nargs, s[1], s[2], s[3], s[4])
            if not h:         # the error, or the result parked while warnings are raised
                h = pending_result()
            if _adopt is not None:
                return _adopt(h)
            t = _new(Tensor)
            t._p = h
            return t
        return self._call_stack(s)

    def _call_stack(self, s, keyset=None):
        st = ffi.new("tl_stack *")
        lib.tl_stack_init(st)
        try:
            if keyset is None:
                rc = lib.tl_op_call_flat(self._op, s[0], self._nargs, s[1], s[2], s[3], s[4], st)
            else:
                rc = lib.tl_op_redispatch_flat(self._op, int(keyset), s[0], self._nargs, s[1], s[2], s[3],
                                               s[4], st)
            check_status(rc)
            n = lib.tl_stack_size(st)
            out = [_boxing.from_ivalue(lib.tl_stack_peek(st, d)) for d in range(n - 1, -1, -1)]
        finally:
            lib.tl_stack_free(st)
        if len(out) == 1:
            return out[0]
        return tuple(out) if out else None

    def redispatch(self, keyset, /, *args, **kwargs):
        """Run the kernel ``keyset`` (a DispatchKeySet, thread-local sets not applied) selects."""
        return self._call_stack(self._bind(args, kwargs), keyset)

    def decompose(self, /, *args, **kwargs):
        """Run the operator's CompositeImplicitAutograd kernel (its decomposition into
        other operators); NotImplemented for an operator without one."""
        from ._dispatch import _key
        if not lib.tl_op_has_registration(self._op, _key("CompositeImplicitAutograd")):
            return NotImplemented
        return self(*args, **kwargs)


class OpOverloadPacket:
    """Every overload of one operator: ``aten.add``."""

    def __init__(self, ns: str, name: str):
        self._ns = ns
        self._opname = name
        self._qualified_op_name = f"{ns}::{name}"
        self._resolved: dict = {}     # argument type key -> the overload resolve() chose
        self._resolved_gen = -1
        self.__name__ = name
        self.__qualname__ = name
        self.__module__ = f"torchlet.ops.{ns}"

    def __str__(self):
        return f"{self._ns}.{self._opname}"

    def __repr__(self):
        return f"<OpOverloadPacket(op='{self._ns}.{self._opname}')>"

    def __hash__(self):
        return id(self)

    @property
    def op(self):
        return self

    def overloads(self) -> list[str]:
        return [o or "default" for o in _defined_overloads(self._qualified_op_name)]

    def __getattr__(self, key: str) -> OpOverload:
        # only reached for an overload not yet cached as an attribute
        if key.startswith("__"):
            raise AttributeError(key)
        with _lock:
            overload = "" if key == "default" else key
            qn = f"{self._qualified_op_name}.{overload}" if overload else self._qualified_op_name
            c_op = _c_op(qn)
            if c_op == ffi.NULL:
                raise AttributeError(f"The underlying op of '{self}' has no overload name '{key}'")
            ov = OpOverload(self, overload, c_op)
            setattr(self, key, ov)      # cached: later lookups never reach __getattr__
            return ov

    def _overload_objects(self) -> list[OpOverload]:
        return [getattr(self, o) for o in self.overloads()]

    def resolve(self, /, *args, **kwargs) -> OpOverload:
        """The overload a call with these arguments runs (the rule in this module's docstring)."""
        tiers: tuple[list, list] = ([], [])
        failures = []
        for ov in self._overload_objects():
            try:
                ov._bind(args, kwargs)
            except (_BindError, NotImplementedError) as e:
                failures.append(f"{ov._schema}:\n{e}")
                continue
            exact = all(_boxing.is_exact(t, v) for (_, _, _, _, t), v in zip(ov._specs, args))
            exact = exact and all(_boxing.is_exact(spec[4], kwargs[spec[0]])
                                  for spec in ov._specs if spec[0] in kwargs)
            defaults_left = ov._nargs - len(args) - len(kwargs)
            tiers[0 if exact else 1].append((defaults_left, ov))
        for tier in tiers:
            if not tier:
                continue
            tier.sort(key=lambda c: c[0])
            best = [ov for d, ov in tier if d == tier[0][0]]
            if len(best) > 1:
                names = ", ".join(str(ov) for ov in best)
                raise RuntimeError(f"{self}: the call matches several overloads equally well ({names}); "
                                   f"call one of them directly")
            return best[0]
        raise RuntimeError("Overloaded torchlet operator invoked from Python failed to match any schema:\n"
                           + "\n\n".join(failures))

    def __call__(self, /, *args, **kwargs):
        # the choice depends only on the arguments' types: remember it per type key
        key = tuple(map(type, args))
        if list in key or tuple in key:     # lists: their element types matter too
            key = tuple(map(_type_key, args))
        if kwargs:
            key += tuple((k, _type_key(v)) for k, v in sorted(kwargs.items()))
        if self._resolved_gen != _generation:
            self._resolved.clear()
            self._resolved_gen = _generation
        ov = self._resolved.get(key)
        if ov is None:
            ov = self._resolved[key] = self.resolve(*args, **kwargs)
        return ov(*args, **kwargs)

    def _forget(self, key: str) -> None:
        with _lock:
            self.__dict__.pop(key, None)


def _type_key(v):
    c = v.__class__
    if c is list or c is tuple:
        return (c, tuple(x.__class__ for x in v))
    return c


class _OpNamespace(types.ModuleType):
    """``torchlet.ops.<ns>``: made for any name; its attributes are packets."""

    def __init__(self, name: str):
        super().__init__(f"torchlet.ops.{name}")
        self.name = name

    def __iter__(self):
        _scan()
        prefix = f"{self.name}::"
        return iter(sorted(k[len(prefix):] for k in _index if k.startswith(prefix)
                           and _defined_overloads(k)))

    def __getattr__(self, op_name: str) -> OpOverloadPacket:
        # only reached for a packet not yet cached as an attribute
        if op_name.startswith("__"):
            raise AttributeError(op_name)
        qn = f"{self.name}::{op_name}"
        with _lock:
            if not _defined_overloads(qn):
                raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute '{op_name}'")
            p = _packets.get(qn)
            if p is None:
                p = _packets[qn] = OpOverloadPacket(self.name, op_name)
            setattr(self, op_name, p)
            return p


class _Ops(types.ModuleType):
    """``torchlet.ops``: namespaces on attribute access (``ops.aten``, ``ops.mylib``)."""

    __file__ = "_ops.py"

    def __init__(self):
        super().__init__("torchlet.ops")
        self._namespaces: dict[str, _OpNamespace] = {}

    def __getattr__(self, name: str) -> _OpNamespace:
        if name.startswith("__"):
            raise AttributeError(name)
        ns = self._namespaces.get(name)
        if ns is None:
            ns = self._namespaces[name] = _OpNamespace(name)
            setattr(self, name, ns)       # later lookups never reach __getattr__
        return ns

    def __iter__(self):
        _scan()
        return iter(sorted({k.partition("::")[0] for k in _index}))

    @property
    def load_library(self):
        """``torchlet.ops.load_library(path)``: PyTorch's spelling of ``torchlet.library.load_library``
        (the same function)."""
        from .library import load_library
        return load_library


ops = _Ops()


def lookup(qualname: str) -> OpOverload:
    """``"ns::name.overload"`` (or ``"ns::name"`` for the default) -> its OpOverload."""
    ns, sep, rest = qualname.partition("::")
    if not sep:
        raise ValueError(f"expected an operator name like 'ns::op' or 'ns::op.overload', got {qualname!r}")
    name, _, overload = rest.partition(".")
    return getattr(getattr(getattr(ops, ns), name), overload or "default")


def forget(qualname: str) -> None:
    """Drop cached handles of an operator whose schema was removed or changed."""
    global _generation
    _generation += 1
    base, _, overload = qualname.partition(".")
    with _lock:
        p = _packets.get(base)
        if p is not None:
            p._forget(overload or "default")
            ns, _, name = base.partition("::")
            space = ops._namespaces.get(ns)
            if space is not None and name in space.__dict__ and not _defined_overloads(base):
                delattr(space, name)
