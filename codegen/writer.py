"""Layer 6: write the generated files.

Files are compared with what is on disk and only changed ones are written
(atomically, through a temporary file); ``check`` writes nothing and returns
a unified diff of what is stale; ``dry_run`` lists what would change.
"""

from __future__ import annotations

import difflib
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class WriteResult:
    changed: list[str] = field(default_factory=list)  # relative paths whose text differs
    unchanged: list[str] = field(default_factory=list)
    diff: str = ""


def _read(path: Path) -> str | None:
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            return fh.read()
    except FileNotFoundError:
        return None


def compare(files: dict[str, str], out_dir: Path, shown_dir: str) -> WriteResult:
    r = WriteResult()
    chunks = []
    for rel, text in files.items():
        old = _read(out_dir / rel)
        if old == text:
            r.unchanged.append(rel)
            continue
        r.changed.append(rel)
        name = f"{shown_dir.rstrip('/')}/{rel}"
        chunks.extend(
            difflib.unified_diff(
                (old or "").splitlines(keepends=True),
                text.splitlines(keepends=True),
                fromfile=f"a/{name}" if old is not None else "/dev/null",
                tofile=f"b/{name}",
            )
        )
    r.diff = "".join(c if c.endswith("\n") else c + "\n" for c in chunks)
    return r


def _file_mode(dest: Path) -> int:
    """Keep the mode of the file being replaced; new files get 0666 & ~umask."""
    try:
        return dest.stat().st_mode & 0o777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write(files: dict[str, str], out_dir: Path, shown_dir: str) -> WriteResult:
    r = compare(files, out_dir, shown_dir)
    for rel in r.changed:
        dest = out_dir / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
                fh.write(files[rel])
            os.chmod(tmp, _file_mode(dest))  # mkstemp creates 0600
            os.replace(tmp, dest)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
    return r
