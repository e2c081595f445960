"""Layer 2 (continued): native_functions.yaml and tags.yaml entries.

``load_native_functions`` turns the YAML entries into :class:`NativeFunction`
objects and, kept apart from them, the per-dispatch-key kernel map
(:class:`BackendIndex`), so that later layers (and other backends) can add
kernels without touching the function model.  Every author error becomes a
diagnostic at the line of the offending field; loading goes on with the next
entry so that one run reports every problem.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from dataclasses import replace as dc_replace
from enum import Enum
from functools import cached_property
from typing import Any, Callable

from . import api
from .diagnostics import DiagnosticSink, Pos, did_you_mean
from .reader import YList, YMap, load_yaml, type_name
from .schema import (
    FunctionSchema,
    OperatorName,
    SchemaParseError,
    _Parser,
    parse_operator_name,
    parse_schema,
    run_parser,
)

# --------------------------------------------------------------------------
# dispatch keys

BACKENDS = (
    "CPU", "CUDA", "HIP", "XLA", "MTIA", "MPS", "IPU", "XPU", "HPU", "VE", "Lazy",
    "Meta", "PrivateUse1", "PrivateUse2", "PrivateUse3",
)  # fmt: skip
FUNCTIONALITIES = ("", "Quantized", "Sparse", "SparseCsr", "NestedTensor", "Autograd")
OTHER_KEYS = (
    "FPGA", "MAIA", "Vulkan", "Metal", "MkldnnCPU", "ZeroTensor", "Conjugate",
    "Negative", "BackendSelect", "Python", "Functionalize", "AutogradNestedTensor",
    "AutogradOther", "ADInplaceOrView", "FuncTorchBatched", "Batched",
)  # fmt: skip

#: alias keys: one entry stands for a set of runtime keys
ALIAS_KEYS = (
    "CompositeImplicitAutograd",
    "CompositeImplicitAutogradNestedTensor",
    "CompositeExplicitAutograd",
    "CompositeExplicitAutogradNonFunctional",
    "Autograd",
)
#: the keys whose kernels are generated from a structured out= kernel
STRUCTURED_DISPATCH_KEYS = frozenset({"CPU", "CUDA", "MPS", "XPU", "MTIA"})
UFUNC_DISPATCH_KEYS = frozenset({"CPU", "CUDA"})

DISPATCH_KEYS = frozenset(
    [f + b for f in FUNCTIONALITIES for b in BACKENDS] + list(OTHER_KEYS) + list(ALIAS_KEYS)
)
AUTOGRAD_KEYS = frozenset(["AutogradNestedTensor"] + ["Autograd" + b for b in BACKENDS])

_COMPOSITES = (
    "CompositeExplicitAutograd",
    "CompositeExplicitAutogradNonFunctional",
    "CompositeImplicitAutograd",
    "CompositeImplicitAutogradNestedTensor",
)


class Variant(Enum):
    function = "function"
    method = "method"


class DeviceCheckType(Enum):
    NoCheck = "NoCheck"
    ExactSame = "ExactSame"


class UfuncKey(Enum):
    CUDAFunctor = "CUDAFunctor"
    CUDAFunctorOnOther = "CUDAFunctorOnOther"
    CUDAFunctorOnSelf = "CUDAFunctorOnSelf"
    CPUScalar = "CPUScalar"
    CPUVector = "CPUVector"
    ScalarOnly = "ScalarOnly"
    Generic = "Generic"


@dataclass(frozen=True, slots=True)
class UfuncInnerLoop:
    """``Generic: add (AllAndComplex, BFloat16, Half)``."""

    ufunc_key: UfuncKey
    name: str
    supported_dtypes: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.name} ({', '.join(self.supported_dtypes)})"


@dataclass(frozen=True, slots=True)
class PrecomputedArg:
    """One value computed by meta(): a C type name and an argument name."""

    type: str
    name: str

    def __str__(self) -> str:
        return f"{self.type} {self.name}"


@dataclass(frozen=True, slots=True)
class Precompute:
    """``precomputed:``: meta() results that replace arguments of impl().

    ``replace`` maps an argument name to the arguments that replace it
    (``kernel_size -> int kH, int kW``); ``add`` are extra arguments.
    """

    replace: tuple[tuple[str, tuple[PrecomputedArg, ...]], ...]
    add: tuple[PrecomputedArg, ...] = ()


@dataclass(frozen=True, slots=True)
class BackendMetadata:
    """The kernel of one operator for one dispatch key."""

    kernel: str
    structured: bool = False
    cpp_namespace: str = "at::native"
    implicit: bool = False  # the CompositeImplicitAutograd default of an entry without dispatch:
    delegate: OperatorName | None = None  # set when the kernel comes through structured_delegate


@dataclass(frozen=True, eq=False)
class BackendIndex:
    """For one dispatch key, which kernel implements each operator."""

    dispatch_key: str
    index: dict[OperatorName, BackendMetadata] = field(default_factory=dict)

    def get(self, name: OperatorName) -> BackendMetadata | None:
        return self.index.get(name)

    def has_kernel(self, name: OperatorName) -> bool:
        return name in self.index


@dataclass(frozen=True, eq=False)
class NativeFunction:
    """One ``- func:`` entry (dispatch data lives in :class:`BackendIndex`)."""

    func: FunctionSchema
    pos: Pos  # the entry (the "- func:" line)
    variants: frozenset[Variant] = frozenset({Variant.function})
    structured: bool = False
    structured_delegate: OperatorName | None = None
    structured_inherits: str | None = None
    precomputed: Precompute | None = None
    ufunc_inner_loop: tuple[UfuncInnerLoop, ...] = ()
    device_check: DeviceCheckType = DeviceCheckType.ExactSame
    device_guard: bool = True
    tags: tuple[str, ...] = ()
    python_module: str | None = None
    autogen: tuple[OperatorName, ...] = ()
    manual_cpp_binding: bool = False
    manual_kernel_registration: bool = False
    cpp_no_default_args: frozenset[str] = frozenset()
    category_override: str | None = None
    use_const_ref_for_mutable_tensors: bool = False
    has_composite_implicit_autograd_kernel: bool = False
    has_composite_explicit_autograd_kernel: bool = False
    #: for a variant synthesised from ``autogen:``, the function it comes from
    generated_from: OperatorName | None = None
    #: positions of the entry's fields (for diagnostics of later layers)
    source: YMap | None = field(default=None, repr=False)

    def kpos(self, key: str) -> Pos:
        """Where field ``key`` of the entry is named (the entry when absent)."""
        return self.source.kpos(key) if self.source is not None else self.pos

    @property
    def name(self) -> OperatorName:
        return self.func.name

    @property
    def root_name(self) -> str:
        return self.func.name.name.base

    def fpos(self, key: str) -> Pos:
        """Where the value of field ``key`` starts (the entry when absent)."""
        return self.source.vpos(key) if self.source is not None and key in self.source else self.pos

    # computed once per function (an instance attribute, not a global cache)
    @cached_property
    def signature(self) -> FunctionSchema:
        """``func.signature()``: shared by the functional/inplace/out variants."""
        return self.func.signature()

    @cached_property
    def signature_key(self) -> str:
        """``str(self.signature)``: equal for the variants of one operator."""
        return self.func.signature_key()

    @cached_property
    def schema_text(self) -> str:
        return str(self.func)


@dataclass(frozen=True, slots=True)
class Tag:
    name: str
    desc: str
    pos: Pos


# --------------------------------------------------------------------------
# tags.yaml


def load_tags(path: str, sink: DiagnosticSink, display: str | None = None) -> dict[str, Tag]:
    data = load_yaml(path, sink, display)
    tags: dict[str, Tag] = {}
    if data is None:
        return tags
    if not isinstance(data, YList):
        sink.error(getattr(data, "pos", Pos(display or path, 1, 1)), "tags file must be a list of '- tag:' entries")
        return tags
    for i, e in enumerate(data):
        pos = data.ipos(i)
        if not isinstance(e, YMap) or "tag" not in e:
            sink.error(pos, "tags entry must be a mapping with a 'tag:' field")
            continue
        for k in e:
            if k not in ("tag", "desc"):
                sink.error(e.kpos(k), f"unknown field '{k}' in tag entry", did_you_mean(str(k), ("tag", "desc")))
        name = e["tag"]
        if not isinstance(name, str):
            sink.error(e.vpos("tag"), f"'tag' must be a string, not {type_name(name)}")
            continue
        if name in tags:
            sink.error(e.vpos("tag"), f"duplicate tag '{name}'", f"first declared on line {tags[name].pos.line}")
            continue
        desc = e.get("desc", "")
        tags[name] = Tag(name, desc if isinstance(desc, str) else str(desc), e.vpos("tag"))
    return tags


# --------------------------------------------------------------------------
# native_functions.yaml

FIELDS = (
    "func", "variants", "dispatch", "structured", "structured_delegate",
    "structured_inherits", "precomputed", "ufunc_inner_loop", "device_check",
    "device_guard", "tags", "python_module", "autogen", "manual_cpp_binding",
    "manual_kernel_registration", "cpp_no_default_args", "category_override",
    "use_const_ref_for_mutable_tensors",
)  # fmt: skip

_BOOL_FIELDS = (
    "structured", "device_guard", "manual_cpp_binding", "manual_kernel_registration",
    "use_const_ref_for_mutable_tensors",
)  # fmt: skip


@dataclass
class NativeFunctionsFile:
    """The result of reading native_functions.yaml."""

    functions: list[NativeFunction]
    backend_indices: dict[str, BackendIndex]
    path: str


def _resolve(pos: Pos | Callable[[], Pos]) -> Pos:
    return pos if isinstance(pos, Pos) else pos()


def parse_schema_at(text: str, pos: Pos | Callable[[], Pos], sink: DiagnosticSink, what: str = "schema") -> FunctionSchema | None:
    """Parse ``text``; on error report it at ``pos`` (or ``pos()``) shifted to the column."""
    try:
        return parse_schema(text)
    except SchemaParseError as e:
        sink.error(_resolve(pos).at(e.offset), f"invalid {what}: {e.message}", e.hint)
        return None


def parse_operator_name_at(text: Any, pos: Pos | Callable[[], Pos], sink: DiagnosticSink, what: str) -> OperatorName | None:
    if not isinstance(text, str):
        sink.error(_resolve(pos), f"'{what}' must be an operator name string, not {type_name(text)}")
        return None
    try:
        return parse_operator_name(text)
    except SchemaParseError as e:
        sink.error(_resolve(pos).at(e.offset), f"invalid operator name {text!r} in '{what}': {e.message}")
        return None


def _comma_list(value: Any) -> list[str]:
    return [v.strip() for v in value.split(",")] if isinstance(value, str) else []


class _EntryReader:
    """Reads the fields of one entry; a method per field keeps each rule short."""

    def __init__(self, e: YMap, sink: DiagnosticSink, valid_tags: dict[str, Tag] | None):
        self.e = e
        self.sink = sink
        self.valid_tags = valid_tags

    def err(self, key: str, msg: str, hint: str | None = None, key_pos: bool = False) -> None:
        self.sink.error(self.e.kpos(key) if key_pos else self.e.vpos(key), msg, hint)

    def want(self, key: str, typ: type | tuple[type, ...], what: str) -> Any:
        v = self.e[key]
        if not isinstance(v, typ) or (typ is str and isinstance(v, bool)):
            self.err(key, f"'{key}' must be {what}, not {type_name(v)}")
            return None
        return v

    def boolean(self, key: str, default: bool) -> bool:
        if key not in self.e:
            return default
        v = self.e[key]
        if not isinstance(v, bool):
            self.err(key, f"'{key}' must be True or False, not {type_name(v)}")
            return default
        return v

    def variants(self) -> frozenset[Variant]:
        if "variants" not in self.e:
            return frozenset({Variant.function})
        v = self.want("variants", str, "a comma-separated string such as 'function, method'")
        out = set()
        for name in _comma_list(v):
            try:
                out.add(Variant(name))
            except ValueError:
                self.err("variants", f"unknown variant '{name}'", did_you_mean(name, ("function", "method")) or "variants are 'function' and 'method'")
        return frozenset(out) if v is not None else frozenset({Variant.function})

    def tags(self) -> tuple[str, ...]:
        if "tags" not in self.e:
            return ()
        v = self.e["tags"]
        names: list[str] = []
        if isinstance(v, str):
            names = _comma_list(v)
        elif isinstance(v, YList) and all(isinstance(x, str) for x in v):
            names = list(v)
        else:
            self.err("tags", f"'tags' must be a tag name or a list of tag names, not {type_name(v)}")
            return ()
        if self.valid_tags is not None:
            for i, t in enumerate(names):
                if t not in self.valid_tags:
                    pos = v.ipos(i) if isinstance(v, YList) else self.e.vpos("tags")
                    self.sink.error(pos, f"unknown tag '{t}'", did_you_mean(t, self.valid_tags) or "tags must be declared in tags.yaml")
        return tuple(names)

    def precomputed(self, func: FunctionSchema | None) -> Precompute | None:
        if "precomputed" not in self.e:
            return None
        v = self.e["precomputed"]
        if not isinstance(v, YList):
            self.err("precomputed", f"'precomputed' must be a list of 'name -> type name, ...' lines, not {type_name(v)}")
            return None
        arg_names = {a.name for a in func.arguments.flat_all} if func else set()
        replace: list[tuple[str, tuple[PrecomputedArg, ...]]] = []
        add: list[PrecomputedArg] = []
        for i, line in enumerate(v):
            pos = v.ipos(i)
            if not isinstance(line, str):
                self.sink.error(pos, f"precomputed entry must be a string, not {type_name(line)}")
                continue
            lhs, arrow, rhs = line.partition("->")
            offset = 0
            if arrow:
                offset = len(lhs) + 2
            args: list[PrecomputedArg] = []
            body = rhs if arrow else line
            ok = True
            for piece in body.split(","):
                words = piece.split()
                if len(words) != 2 or not all(w.isidentifier() for w in words):
                    self.sink.error(pos.at(offset), f"invalid precomputed entry: expected 'type name', found {piece.strip()!r}")
                    ok = False
                    break
                args.append(PrecomputedArg(words[0], words[1]))
                offset += len(piece) + 1
            if not ok:
                continue
            if arrow:
                name = lhs.strip()
                if func is not None and name not in arg_names:
                    self.sink.error(pos, f"precomputed replaces unknown argument '{name}'", did_you_mean(name, arg_names))
                replace.append((name, tuple(args)))
            else:
                add.extend(args)
        return Precompute(tuple(replace), tuple(add))

    def ufunc_inner_loop(self) -> tuple[UfuncInnerLoop, ...]:
        if "ufunc_inner_loop" not in self.e:
            return ()
        v = self.e["ufunc_inner_loop"]
        if not isinstance(v, YMap):
            self.err("ufunc_inner_loop", f"'ufunc_inner_loop' must be a mapping of ufunc keys to 'name (dtypes)', not {type_name(v)}")
            return ()
        loops = []
        for k, text in v.items():
            try:
                key = UfuncKey(k)
            except ValueError:
                self.sink.error(v.kpos(k), f"unknown ufunc key '{k}'", did_you_mean(str(k), [u.value for u in UfuncKey]))
                continue
            if not isinstance(text, str):
                self.sink.error(v.vpos(k), f"invalid ufunc_inner_loop entry: expected 'name (dtypes)', found {type_name(text)}")
                continue

            def rule(p: _Parser) -> tuple[str, list[str]]:
                name = p.ident("a ufunc name")[1]
                p.expect("(", "'(' before the dtype list")
                dtypes = [p.ident("a dtype name")[1]]
                while p.accept(","):
                    dtypes.append(p.ident("a dtype name")[1])
                p.expect(")", "')' after the dtype list")
                return name, dtypes

            try:
                name, dtypes = run_parser(text, rule)
            except SchemaParseError as e:
                self.sink.error(v.vpos(k).at(e.offset), f"invalid ufunc_inner_loop entry: {e.message}")
                continue
            loops.append(UfuncInnerLoop(key, name, tuple(dtypes)))
        return tuple(loops)

    def dispatch(self, func: FunctionSchema | None, structured: bool) -> dict[str, tuple[BackendMetadata, Any]]:
        if "dispatch" not in self.e:
            return {}
        v = self.e["dispatch"]
        if not isinstance(v, YMap):
            self.err("dispatch", f"'dispatch' must be a mapping of dispatch keys to kernel names, not {type_name(v)}")
            return {}
        # an empty table ("dispatch: {}") deliberately registers no kernel at all
        out: dict[str, tuple[BackendMetadata, Any]] = {}
        for raw_keys, kernel in v.items():
            if not isinstance(kernel, str) or not kernel.strip():
                self.sink.error(v.vpos(raw_keys), f"kernel for '{raw_keys}' must be a kernel name, not {type_name(kernel)}")
                continue
            if not isinstance(raw_keys, str):
                self.sink.error(v.kpos(raw_keys), f"dispatch key must be a name, not {type_name(raw_keys)}")
                continue
            ns = "at::native"
            name = kernel.strip()
            if "::" in name:
                parts = name.split("::")
                if len(parts) > 3 or not all(parts):
                    self.sink.error(v.vpos(raw_keys), f"invalid kernel name '{name}'", "at most three levels of namespace: ns::sub::kernel")
                    continue
                ns, name = "::".join(parts[:-1]) + "::native", parts[-1]
            if not name.isidentifier():
                self.sink.error(v.vpos(raw_keys), f"invalid kernel name '{kernel}'")
                continue
            offset = 0
            for key in raw_keys.split(","):
                k = key.strip()
                where = (raw_keys, offset + (len(key) - len(key.lstrip())))
                offset += len(key) + 1
                if k not in DISPATCH_KEYS:
                    self.sink.error(v.kpos(where[0]).at(where[1]), f"unknown dispatch key '{k}'", did_you_mean(k, DISPATCH_KEYS))
                    continue
                if k in out:
                    first = out[k][1]
                    self.sink.error(
                        v.kpos(where[0]).at(where[1]), f"dispatch key '{k}' is listed twice", f"first given on line {v.kpos(first[0]).line}"
                    )
                    continue
                out[k] = (BackendMetadata(name, structured and k in STRUCTURED_DISPATCH_KEYS, ns), where)
        if func is not None and len(out) == 1 and "CompositeImplicitAutograd" in out:
            md = out["CompositeImplicitAutograd"][0]
            if md.kernel == api.cpp_name(func) and len(v) == 1 and "structured_delegate" not in self.e:
                self.err("dispatch", "unnecessary dispatch table: CompositeImplicitAutograd with the default kernel name is implied", "delete the 'dispatch:' entry", key_pos=True)
        composites = [k for k in out if k in _COMPOSITES]
        ok = len(composites) <= 1 or (
            len(composites) == 2
            and "CompositeImplicitAutogradNestedTensor" in composites
            and "CompositeExplicitAutogradNonFunctional" not in composites
        )
        if not ok:
            self.err(
                "dispatch",
                f"cannot combine {' and '.join(composites)} in one dispatch table",
                "each composite key subsumes the others; keep one (CompositeExplicitAutograd if you also write an autograd formula)",
                key_pos=True,
            )
        return out


def load_native_functions(
    path: str,
    sink: DiagnosticSink,
    valid_tags: dict[str, Tag] | None = None,
    display: str | None = None,
) -> NativeFunctionsFile:
    shown = display if display is not None else str(path)
    data = load_yaml(path, sink, shown)
    result = NativeFunctionsFile([], {}, shown)
    if data is None:
        return result
    if not isinstance(data, YList):
        sink.error(getattr(data, "pos", Pos(shown, 1, 1)), "native functions file must be a list of '- func:' entries")
        return result
    seen: dict[OperatorName, NativeFunction] = {}
    backend: dict[str, dict[OperatorName, BackendMetadata]] = {}
    for i, e in enumerate(data):
        pos = data.ipos(i)
        if not isinstance(e, YMap):
            sink.error(pos, f"native function entry must be a mapping with a 'func:' field, not {type_name(e)}")
            continue
        f, dispatch = _load_entry(e, pos, sink, valid_tags)
        if f is None:
            continue
        prev = seen.get(f.func.name)
        if prev is not None:
            sink.error(f.fpos("func"), f"duplicate operator '{f.func.name}'", f"first declared on line {prev.pos.line}")
            continue
        seen[f.func.name] = f
        result.functions.append(f)
        for key, md in dispatch.items():
            backend.setdefault(key, {})[f.func.name] = md
    result.backend_indices = {k: BackendIndex(k, backend[k]) for k in sorted(backend)}
    return result


def _load_entry(
    e: YMap, pos: Pos, sink: DiagnosticSink, valid_tags: dict[str, Tag] | None
) -> tuple[NativeFunction | None, dict[str, BackendMetadata]]:
    r = _EntryReader(e, sink, valid_tags)
    for k in e:
        if k not in FIELDS:
            hint = did_you_mean(str(k), FIELDS)
            sink.error(e.kpos(k), f"unknown field '{k}' in native function entry", hint)
    if "func" not in e:
        sink.error(pos, "native function entry has no 'func:' field", "every entry starts with '- func: name.overload(args) -> returns'")
        return None, {}
    text = r.want("func", str, "a schema string")
    if text is None:
        return None, {}
    func = parse_schema_at(text, lambda: e.vpos("func"), sink)
    canonical = str(func) if func is not None else None
    if canonical is not None and canonical != text:
        sink.error(e.vpos("func"), "schema is not written in canonical form", f"write '{canonical}'")

    structured = r.boolean("structured", False)
    delegate = None
    if "structured_delegate" in e:
        delegate = parse_operator_name_at(e["structured_delegate"], lambda: e.vpos("structured_delegate"), sink, "structured_delegate")
        if delegate is not None and delegate.namespace is None and func is not None and func.name.namespace:
            # `structured_delegate: scale.out` names the out= function of the entry's own namespace
            delegate = dc_replace(delegate, namespace=func.name.namespace)
    inherits = None
    if "structured_inherits" in e:
        inherits = r.want("structured_inherits", str, "a class name")
    dispatch = r.dispatch(func, structured)
    variants = r.variants()
    tags = r.tags()
    precomputed = r.precomputed(func)
    ufunc = r.ufunc_inner_loop()

    device_check = DeviceCheckType.ExactSame
    if "device_check" in e:
        v = r.want("device_check", str, "NoCheck or ExactSame")
        if v is not None:
            try:
                device_check = DeviceCheckType(v)
            except ValueError:
                r.err("device_check", f"unknown device_check '{v}'", did_you_mean(v, ("NoCheck", "ExactSame")) or "use NoCheck or ExactSame")
    python_module = r.want("python_module", str, "a module name such as 'nn'") if "python_module" in e else None
    category = r.want("category_override", str, "a category name") if "category_override" in e else None

    autogen: list[OperatorName] = []
    if "autogen" in e:
        v = r.want("autogen", str, "a comma-separated list of operator names")
        if v is not None:
            for n in _comma_list(v):
                op = parse_operator_name_at(n, lambda: e.vpos("autogen"), sink, "autogen")
                if op is not None:
                    autogen.append(op)

    no_defaults: frozenset[str] = frozenset()
    if "cpp_no_default_args" in e:
        v = r.want("cpp_no_default_args", YList, "a list of argument names")
        if v is not None:
            names = {a.name for a in func.arguments.flat_all} if func else None
            for j, n in enumerate(v):
                if not isinstance(n, str):
                    sink.error(v.ipos(j), f"argument name must be a string, not {type_name(n)}")
                elif names is not None and n not in names:
                    sink.error(v.ipos(j), f"cpp_no_default_args names unknown argument '{n}'", did_you_mean(n, names))
            no_defaults = frozenset(x for x in v if isinstance(x, str))

    flags = {k: r.boolean(k, k == "device_guard") for k in _BOOL_FIELDS if k != "structured"}

    if func is None:
        return None, {}

    # cross-field rules
    if Variant.method in variants and func.arguments.self_arg is None:
        r.err("variants", f"a method variant needs an argument named 'self'; '{func.name}' has none")
    if structured and not func.is_out_fn():
        r.err("structured", f"only out= functions can be structured; '{func.name}' is {func.kind().value}",
              "mark the out= variant 'structured: True' and give this one 'structured_delegate'", key_pos=True)
    if structured and delegate is not None:
        r.err("structured_delegate", "a function cannot be both structured and a structured_delegate", key_pos=True)
    if delegate is not None and func.is_out_fn():
        r.err("structured_delegate", "an out= function cannot have a structured_delegate", "make it 'structured: True' instead", key_pos=True)
    if inherits is not None and not structured:
        r.err("structured_inherits", "'structured_inherits' needs 'structured: True'", key_pos=True)
    if precomputed is not None and not structured:
        r.err("precomputed", "'precomputed' needs 'structured: True'", key_pos=True)
    if ufunc:
        if not structured:
            r.err("ufunc_inner_loop", "ufunc_inner_loop needs 'structured: True'", key_pos=True)
        for k in UFUNC_DISPATCH_KEYS:
            if k in dispatch:
                r.err("ufunc_inner_loop", f"ufunc should not have an explicit dispatch entry for {k}", key_pos=True)

    kernels = {k: md for k, (md, _) in dispatch.items()}
    if "dispatch" not in e and not structured and delegate is None:
        kernels["CompositeImplicitAutograd"] = BackendMetadata(api.default_kernel_name(func), implicit=True)
    if structured and ufunc:
        for k in sorted(UFUNC_DISPATCH_KEYS):
            kernels.setdefault(k, BackendMetadata(f"ufunc_{func.name.name.base}", True, "at::native"))

    f = NativeFunction(
        func=func,
        pos=pos,
        variants=variants,
        structured=structured,
        structured_delegate=delegate,
        structured_inherits=inherits,
        precomputed=precomputed,
        ufunc_inner_loop=ufunc,
        device_check=device_check,
        tags=tags,
        python_module=python_module,
        autogen=tuple(autogen),
        cpp_no_default_args=no_defaults,
        category_override=category,
        has_composite_implicit_autograd_kernel="CompositeImplicitAutograd" in kernels,
        has_composite_explicit_autograd_kernel="CompositeExplicitAutograd" in kernels,
        source=e,
        **flags,
    )
    f.__dict__["schema_text"] = canonical  # already computed: seed the cached property
    return f, kernels
