"""The whole model of one run: read, model and analyse the inputs.

``load_model`` is the front end's single entry point.  It collects every
author error of every input and raises one :class:`CodegenError` at the end.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Iterator

from .autocast import AutocastRule, load_autocast
from .analysis import (
    NativeFunctionsGroup,
    generate_autogen_variants,
    group_functions,
    resolve_delegates,
)
from .derivatives import DerivativeEntry, load_derivatives
from .diagnostics import DiagnosticSink
from .schema import OperatorName
from .native import BackendIndex, BackendMetadata, NativeFunction, Tag, load_native_functions, load_tags


@dataclass(frozen=True)
class Inputs:
    """The input files of a run (``None``: not given)."""

    native_functions: str
    derivatives: str | None = None
    tags: str | None = None
    autocast: str | None = None

    def paths(self) -> list[str]:
        return [p for p in (self.native_functions, self.derivatives, self.tags, self.autocast) if p]


@dataclass(eq=False)
class Model:
    inputs: Inputs
    functions: list[NativeFunction]
    backend_indices: dict[str, BackendIndex]
    groups: list[NativeFunctionsGroup]
    derivatives: list[DerivativeEntry]
    tags: dict[str, Tag] = field(default_factory=dict)
    autocast: list[AutocastRule] = field(default_factory=list)
    #: an operator library's model: torchlet's own (aten) functions, which its
    #: derivative formulas may call besides its own operators
    base_functions: list[NativeFunction] = field(default_factory=list)

    @cached_property
    def callable_functions(self) -> list[NativeFunction]:
        """The functions a derivative formula can call: the model's own first."""
        return self.functions + self.base_functions

    @cached_property
    def _callable_by_base_name(self) -> dict[str, list[NativeFunction]]:
        by_name: dict[str, list[NativeFunction]] = {}
        for f in self.callable_functions:
            by_name.setdefault(str(f.func.name.name), []).append(f)
        return by_name

    def callable_named(self, base: str) -> list[NativeFunction]:
        """The callable functions whose base name (``add`` of ``add_.Tensor``) is ``base``, in order."""
        return self._callable_by_base_name.get(base, [])

    @cached_property
    def _kernels_by_op(self) -> dict[OperatorName, dict[str, BackendMetadata]]:
        by_op: dict[OperatorName, dict[str, BackendMetadata]] = {}
        for key, idx in self.backend_indices.items():  # sorted by key
            for name, md in idx.index.items():
                by_op.setdefault(name, {})[key] = md
        return by_op

    def kernels(self, f: NativeFunction) -> dict[str, BackendMetadata]:
        """Dispatch key -> kernel implementing ``f``, in key order."""
        return dict(self._kernels_by_op.get(f.func.name, {}))

    def derivative_of(self, f: NativeFunction) -> DerivativeEntry | None:
        """The derivatives.yaml entry of ``f`` itself, if any."""
        return self._derivative_by_function.get(id(f))

    def autograd_of(self, f: NativeFunction) -> DerivativeEntry | None:
        """The entry whose formulas differentiate ``f``: its own, or (as in
        PyTorch) the one of the functional variant of its group for an
        inplace function without one.  Out= functions are not differentiable."""
        own = self.derivative_of(f)
        if own is not None or f.func.is_out_fn():
            return own
        g = self.group_of(f)
        if g is None:
            return None
        if g.functional is not None and g.functional is not f:
            return self.derivative_of(g.functional)
        if f.generated_from is not None and g.functional is f:
            # an autogen'd functional variant (_index_put_impl) takes the formula
            # of the mutable variant it comes from, as PyTorch's find_info does
            # when that formula does not save self (which the op overwrites)
            for v in (g.inplace, g.mutable):
                d = self.derivative_of(v) if v is not None else None
                if d is not None and not any(
                    "self" in s.name for i in d.infos.values() for s in i.all_saved_inputs
                ):
                    return d
        return None

    def group_of(self, f: NativeFunction) -> NativeFunctionsGroup | None:
        return self._group_by_function.get(id(f))

    @cached_property
    def _group_by_function(self) -> dict[int, NativeFunctionsGroup]:
        return {id(f): g for g in self.groups for f in g.functions()}

    @cached_property
    def _derivative_by_function(self) -> dict[int, DerivativeEntry]:
        return {id(d.function): d for d in self.derivatives}



def default_tags_path(native_functions: str) -> str | None:
    """tags.yaml beside native_functions.yaml, when there is one."""
    p = Path(native_functions).with_name("tags.yaml")
    return str(p) if p.is_file() else None


def default_autocast_path(native_functions: str) -> str | None:
    """autocast.yaml beside native_functions.yaml, when there is one."""
    p = Path(native_functions).with_name("autocast.yaml")
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
    generated, generated_kernels = generate_autogen_variants(nf.functions, sink)
    functions = nf.functions + generated
    indices = dict(nf.backend_indices)
    for key, kernels in generated_kernels.items():
        merged = dict(indices[key].index) if key in indices else {}
        merged.update(kernels)
        indices[key] = BackendIndex(key, merged)
    groups = group_functions(functions, sink)
    backend = resolve_delegates(functions, dict(sorted(indices.items())), sink)
    derivs = load_derivatives(inputs.derivatives, sink, functions) if inputs.derivatives else []
    autocast = load_autocast(inputs.autocast, sink, functions) if inputs.autocast else []
    sink.check()
    return Model(inputs, functions, backend, groups, derivs, tags or {}, autocast)
