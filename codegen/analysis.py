"""Layer 3: analysis of the native functions.

* group the functional / inplace / mutable / out variants of one operator by
  their :meth:`~codegen.schema.FunctionSchema.signature`;
* resolve ``structured_delegate`` and check it (missing target, a target that
  is not structured, mismatched signatures);
* complete the per-dispatch-key kernel map: a function that delegates to a
  structured out= kernel is implemented, for each structured key, by that
  kernel.
"""

from __future__ import annotations

from dataclasses import dataclass

from .diagnostics import DiagnosticSink, did_you_mean
import string

from .native import (
    STRUCTURED_DISPATCH_KEYS,
    BackendIndex,
    BackendMetadata,
    DeviceCheckType,
    NativeFunction,
    Variant,
)
from .schema import (
    Annotation,
    Argument,
    Arguments,
    BaseOperatorName,
    BaseTy,
    BaseType,
    FunctionSchema,
    OperatorName,
    Return,
    SchemaKind,
)


@dataclass(frozen=True, eq=False)
class NativeFunctionsGroup:
    """The variants of one operator that share a signature."""

    signature_key: str
    functional: NativeFunction | None = None
    inplace: NativeFunction | None = None
    mutable: NativeFunction | None = None
    out: NativeFunction | None = None
    scratch: NativeFunction | None = None

    @property
    def signature(self) -> FunctionSchema:
        return self.functions()[0].signature

    @property
    def structured(self) -> bool:
        return self.out is not None and self.out.structured

    def functions(self) -> tuple[NativeFunction, ...]:
        return tuple(
            f for f in (self.functional, self.inplace, self.mutable, self.out, self.scratch) if f is not None
        )

    @property
    def root_name(self) -> str:
        return self.signature.name.name.base


def group_functions(functions: list[NativeFunction], sink: DiagnosticSink) -> list[NativeFunctionsGroup]:
    """Group by signature, in the order each signature first appears."""
    by_sig: dict[str, dict[SchemaKind, NativeFunction]] = {}
    for f in functions:
        d = by_sig.setdefault(f.signature_key, {})
        kind = f.func.kind()
        prev = d.get(kind)
        if prev is not None:
            sink.error(
                f.fpos("func"),
                f"'{f.func.name}' and '{prev.func.name}' are both {kind.value} variants of the same signature",
                f"'{prev.func.name}' is on line {prev.pos.line}; two overloads must differ in their arguments",
            )
            continue
        d[kind] = f
    return [
        NativeFunctionsGroup(
            key,
            d.get(SchemaKind.functional),
            d.get(SchemaKind.inplace),
            d.get(SchemaKind.mutable),
            d.get(SchemaKind.out),
            d.get(SchemaKind.scratch),
        )
        for key, d in by_sig.items()
    ]


def resolve_delegates(
    functions: list[NativeFunction],
    backend_indices: dict[str, BackendIndex],
    sink: DiagnosticSink,
) -> dict[str, BackendIndex]:
    """Check every ``structured_delegate`` and return the completed kernel map."""
    by_name: dict[OperatorName, NativeFunction] = {f.func.name: f for f in functions}
    names = [str(n) for n in by_name]
    index = {k: dict(v.index) for k, v in backend_indices.items()}
    for f in functions:
        target_name = f.structured_delegate
        if target_name is None:
            continue
        pos = f.fpos("structured_delegate")
        target = by_name.get(target_name)
        if target is None:
            sink.error(pos, f"structured_delegate '{target_name}' of '{f.func.name}' is not a known operator", did_you_mean(str(target_name), names))
            continue
        if not target.structured:
            sink.error(
                pos,
                f"structured_delegate '{target_name}' of '{f.func.name}' is not structured",
                f"mark '{target_name}' (line {target.pos.line}) 'structured: True'",
            )
            continue
        if target.signature_key != f.signature_key:
            sink.error(
                pos,
                f"structured_delegate '{target_name}' of '{f.func.name}' has a different signature",
                f"'{f.signature}' vs '{target.signature}'",
            )
            continue
        for key, kernels in backend_indices.items():
            md = kernels.get(target_name)
            if md is None or key not in STRUCTURED_DISPATCH_KEYS and not md.structured:
                continue
            if f.func.name not in index[key]:
                index[key][f.func.name] = BackendMetadata(md.kernel, True, md.cpp_namespace, delegate=target_name)
    return {k: BackendIndex(k, v) for k, v in sorted(index.items())}


def kernels_of(name: OperatorName, backend_indices: dict[str, BackendIndex]) -> dict[str, BackendMetadata]:
    """Dispatch key -> kernel for one operator, in key order."""
    return {k: idx.index[name] for k, idx in backend_indices.items() if name in idx.index}


def out_overload_name(overload: str) -> str:
    """The overload of a generated out= variant: ``out`` or ``<overload>_out``."""
    return f"{overload}_out" if overload else "out"


def functional_variant_schema(func: FunctionSchema) -> FunctionSchema:
    """The functional variant of a mutable, inplace or out= schema.

    Its arguments are the signature's (no alias annotations, no out
    arguments, no TensorOptions); mutated inputs that were not returned
    become extra returns named ``<arg>_out``.  A mutable function's variant is
    named ``<name>_functional`` (so that it does not clash with it in C++).
    """
    sig = func.signature(keep_return_names=True)
    n = func.name.name
    return FunctionSchema(
        OperatorName(
            BaseOperatorName(n.base, False, n.dunder_method, func.kind() is SchemaKind.mutable),
            func.name.overload_name,
            func.name.namespace,
        ),
        sig.arguments,
        sig.returns,
    )


def out_variant_schema(func: FunctionSchema) -> FunctionSchema | None:
    """The out= variant of a functional, mutable or inplace schema (None when
    there is nothing to write out: no tensor-like return and not inplace)."""
    a = func.arguments
    n = func.name.name
    name = OperatorName(BaseOperatorName(n.base, False, n.dunder_method), out_overload_name(func.name.overload_name), func.name.namespace)
    kind = func.kind()
    if kind is SchemaKind.inplace:
        if a.self_arg is None:
            return None
        self_arg = a.self_arg
        out = Argument("out", self_arg.type, None, self_arg.annotation)
        return FunctionSchema(
            name,
            Arguments(a.pre_self_positional, Argument(self_arg.name, self_arg.type, self_arg.default, None), a.post_self_positional, a.kwarg_only, (out,)),
            func.returns,
        )
    if not any(r.type.is_tensor_like() for r in func.returns):
        return None
    used = {x for arg in a.flat_all if arg.annotation is not None for x in arg.annotation.alias_set}
    letters = [c for c in string.ascii_lowercase if c not in used]
    all_plain_tensors = all(r.type == BaseType(BaseTy.Tensor) for r in func.returns)
    outs: list[Argument] = []
    rets: list[Return] = []
    for i, r in enumerate(func.returns):
        if r.type.is_tensor_like():
            arg = Argument("out" if len(func.returns) == 1 else f"out{i}", r.type, None, Annotation((letters[i],), True))
            outs.append(arg)
            if all_plain_tensors:
                rets.append(Return(None, arg.type, arg.annotation))
        else:
            rets.append(r)
    base = a if kind is SchemaKind.mutable else func.signature().arguments
    return FunctionSchema(
        name,
        Arguments(base.pre_self_positional, base.self_arg, base.post_self_positional, base.kwarg_only, tuple(outs)),
        tuple(rets),
    )


def generate_autogen_variants(
    functions: list[NativeFunction], sink: DiagnosticSink
) -> tuple[list[NativeFunction], dict[str, dict[OperatorName, BackendMetadata]]]:
    """The variants that ``autogen:`` lines ask for, and their kernels.

    A name whose overload is ``out`` or ends in ``_out`` asks for the out=
    variant of the entry's group,
    made from its mutable, else inplace, else functional member; any other
    name asks for the functional variant, made from the mutable, else
    inplace, else out= member.  The name must be the one the variant gets
    (an error says which).  Generated variants are functions only, tagged
    ``generated`` and implemented by a CompositeExplicitAutograd kernel.
    As in PyTorch, nothing is generated for a group whose members all
    decompose (CompositeImplicitAutograd) unless one is tagged ``core``.
    """
    import dataclasses

    from . import api

    declared = {f.func.name: f for f in functions}
    existing = set(declared)
    groups: dict[str, dict[SchemaKind, NativeFunction]] = {}
    for f in functions:
        groups.setdefault(f.signature_key, {}).setdefault(f.func.kind(), f)
    generated: list[NativeFunction] = []
    kernels: dict[str, dict[OperatorName, BackendMetadata]] = {}
    for f in functions:
        for name in f.autogen:
            if name in declared:
                sink.error(
                    f.fpos("autogen"),
                    f"autogen '{name}' names an operator declared on line {declared[name].pos.line}",
                    f"remove '{name}' from autogen",
                )
                continue
            if name in existing:  # listed by another variant of the group too
                continue
            d = groups[f.signature_key]
            if all(g.has_composite_implicit_autograd_kernel for g in d.values()) and not any("core" in g.tags for g in d.values()):
                # like PyTorch: an operator that only decomposes never needs the variant
                continue
            ov = name.overload_name
            wants_out = ov == "out" or ov.endswith("_out")
            order = (SchemaKind.mutable, SchemaKind.inplace, SchemaKind.functional) if wants_out else (SchemaKind.mutable, SchemaKind.inplace, SchemaKind.out)
            base = next((d[k] for k in order if k in d), None)
            have = d.get(SchemaKind.out if wants_out else SchemaKind.functional)
            if have is not None:
                sink.error(
                    f.fpos("autogen"),
                    f"autogen '{name}': '{f.func.name}' already has {'an out=' if wants_out else 'a functional'} variant, '{have.func.name}' (line {have.pos.line})",
                    f"remove '{name}' from autogen",
                )
                continue
            if base is None:
                sink.error(f.fpos("autogen"), f"autogen '{name}': '{f.func.name}' has no variant to make it from")
                continue
            func = out_variant_schema(base.func) if wants_out else functional_variant_schema(base.func)
            if func is None:
                sink.error(f.fpos("autogen"), f"autogen '{name}': '{base.func.name}' has no tensor return to turn into an out argument")
                continue
            if func.name != name:
                sink.error(f.fpos("autogen"), f"autogen '{name}' does not name the generated variant '{func.name}'", f"write '{func.name}'")
                continue
            tags = {"generated"} | (set(base.tags) & {"nondeterministic_seeded", "view_copy", "pt2_compliant_tag"})
            if func.is_out_fn():
                tags.add("out")
            new = dataclasses.replace(
                base,
                func=func,
                variants=frozenset({Variant.function}),
                structured=False,
                structured_delegate=None,
                structured_inherits=None,
                precomputed=None,
                ufunc_inner_loop=(),
                autogen=(),
                manual_cpp_binding=False,
                manual_kernel_registration=False,
                python_module=None,
                category_override=None,
                device_guard=False,
                device_check=DeviceCheckType.NoCheck,
                cpp_no_default_args=frozenset(),
                tags=tuple(sorted(tags)),
                has_composite_implicit_autograd_kernel=False,
                has_composite_explicit_autograd_kernel=True,
                generated_from=base.func.name,
            )
            kernel = api.op_symbol(func.name) if func.is_out_fn() else api.cpp_name(func)
            kernels.setdefault("CompositeExplicitAutograd", {})[func.name] = BackendMetadata(kernel)
            d[func.kind()] = new
            existing.add(name)
            generated.append(new)
    return generated, kernels
