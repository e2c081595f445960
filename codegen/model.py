"""The whole model of one run: read, model and analyse the inputs.

``load_model`` is the front end's single entry point.  It collects every
author error of every input and raises one :class:`CodegenError` at the end.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from .analysis import (
    NativeFunctionsGroup,
    generate_functional_variants,
    group_functions,
    kernels_of,
    resolve_delegates,
)
from .derivatives import DerivativeEntry, load_derivatives
from .diagnostics import DiagnosticSink
from .native import BackendIndex, BackendMetadata, NativeFunction, Tag, load_native_functions, load_tags


@dataclass(frozen=True)
class Inputs:
    """The input files of a run (``None``: not given)."""

    native_functions: str
    derivatives: str | None = None
    tags: str | None = None

    def paths(self) -> list[str]:
        return [p for p in (self.native_functions, self.derivatives, self.tags) if p]


@dataclass(eq=False)
class Model:
    inputs: Inputs
    functions: list[NativeFunction]
    backend_indices: dict[str, BackendIndex]
    groups: list[NativeFunctionsGroup]
    derivatives: list[DerivativeEntry]
    tags: dict[str, Tag] = field(default_factory=dict)

    def kernels(self, f: NativeFunction) -> dict[str, BackendMetadata]:
        """Dispatch key -> kernel implementing ``f``."""
        return kernels_of(f.func.name, self.backend_indices)

    def derivative_of(self, f: NativeFunction) -> DerivativeEntry | None:
        for d in self.derivatives:
            if d.function is f:
                return d
        return None


def default_tags_path(native_functions: str) -> str | None:
    """tags.yaml beside native_functions.yaml, when there is one."""
    p = Path(native_functions).with_name("tags.yaml")
    return str(p) if p.is_file() else None


@contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """Pause the cyclic garbage collector while the model is built.

    Loading allocates ~10^6 small acyclic objects; collections triggered by
    those allocations find nothing to free and cost about a sixth of the run.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def load_model(inputs: Inputs) -> Model:
    """Read and analyse ``inputs``; raises CodegenError with every author error."""
    with _no_cycle_collection():
        return _load_model(inputs)


def _load_model(inputs: Inputs) -> Model:
    sink = DiagnosticSink()
    tags = load_tags(inputs.tags, sink) if inputs.tags else None
    nf = load_native_functions(inputs.native_functions, sink, tags)
    functions = nf.functions + generate_functional_variants(nf.functions, sink)
    groups = group_functions(functions, sink)
    backend = resolve_delegates(functions, nf.backend_indices, sink)
    derivs = load_derivatives(inputs.derivatives, sink, functions) if inputs.derivatives else []
    sink.check()
    return Model(inputs, functions, backend, groups, derivs, tags or {})
