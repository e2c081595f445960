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
from .native import (
    STRUCTURED_DISPATCH_KEYS,
    BackendIndex,
    BackendMetadata,
    NativeFunction,
)
from .schema import FunctionSchema, OperatorName, SchemaKind


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


def generate_functional_variants(functions: list[NativeFunction], sink: DiagnosticSink) -> list[NativeFunction]:
    """The functional variants that ``autogen:`` asks for (``foo_functional`` or ``foo.functional``).

    The functional variant of a mutable or inplace function takes the same
    arguments without alias annotations and returns, after the original
    returns, each mutated argument as ``<name>_out``.  Out variants named in
    ``autogen:`` are recorded on the function but not synthesised here.
    """
    import dataclasses

    from .schema import Argument, Arguments, BaseOperatorName, Return

    existing = {f.func.name for f in functions}
    out: list[NativeFunction] = []
    for f in functions:
        for name in f.autogen:
            is_functional = name.name.functional_overload or "functional" in name.overload_name
            if not is_functional or name in existing:
                continue
            kind = f.func.kind()
            if kind not in (SchemaKind.mutable, SchemaKind.inplace):
                sink.error(f.fpos("autogen"), f"autogen '{name}': only a mutable or inplace function has a functional variant, '{f.func.name}' is {kind.value}")
                continue
            a = f.func.arguments

            def strip(arg: Argument) -> Argument:
                return Argument(arg.name, arg.type, arg.default, None)

            returned = {r.annotation for r in f.func.returns if r.annotation is not None}
            extra = tuple(
                Return(f"{arg.name}_out", arg.type, None)
                for arg in a.positional
                if arg.is_write and arg.annotation not in returned
            )
            func = FunctionSchema(
                name,
                Arguments(
                    tuple(map(strip, a.pre_self_positional)),
                    strip(a.self_arg) if a.self_arg is not None else None,
                    tuple(map(strip, a.post_self_positional)),
                    tuple(map(strip, a.kwarg_only)),
                    (),
                ),
                tuple(Return(r.name, r.type, None) for r in f.func.returns) + extra,
            )
            out.append(
                dataclasses.replace(
                    f,
                    func=func,
                    structured=False,
                    structured_delegate=None,
                    autogen=(),
                    tags=tuple(sorted(set(f.tags) | {"generated"})),
                    generated_from=f.func.name,
                )
            )
            existing.add(name)
    return out
