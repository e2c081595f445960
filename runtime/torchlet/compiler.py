"""torchlet.compiler: torch.compiler's surface over torchlet.compile
(runtime/torchlet/_compile, docs/COMPILE.md)."""
from __future__ import annotations

from ._compile.api import RecompileError, Unsupported, reset, set_stance
from ._compile.explain import ExplainOutput, explain

__all__ = ["explain", "reset", "set_stance", "ExplainOutput", "Unsupported", "RecompileError"]
