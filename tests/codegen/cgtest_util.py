"""Helpers shared by the generator's tests (a uniquely named module: tests/ is not a package)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared/reference/pytorch-2.13"

needs_corpus = pytest.mark.skipif(
    not (CORPUS / "native_functions.yaml").is_file(),
    reason="PyTorch reference corpus (../shared/reference/pytorch-2.13) not present",
)


def run_cli(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    """Run ``python -m codegen ARGS`` as a user would."""
    return subprocess.run(
        [sys.executable, "-m", "codegen", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )


def declarations(files) -> str:
    """Every generated C declaration of torchlet's operators: tl_ops.h and the
    per-operator headers it includes (include/ops/<name>.h). ``files`` is an
    emitter's {path: text} or a generated folder."""
    if isinstance(files, Path):
        files = {p.relative_to(files).as_posix(): p.read_text()
                 for p in [files / "include/tl_ops.h", *sorted((files / "include/ops").glob("*.h"))] if p.exists()}
    return "\n".join(t for p, t in sorted(files.items()) if p == "include/tl_ops.h" or p.startswith("include/ops/"))
