"""Author-facing diagnostics: positions, collected errors, one exception.

Every error that an operator author can cause (a typo in a YAML file, a bad
schema, a derivative for a function that does not exist) is reported as a
:class:`Diagnostic` that points at ``path:line:col``.  Layers never raise on
the first problem: they add diagnostics to a :class:`DiagnosticSink` and go
on, and the driver raises one :class:`CodegenError` carrying all of them.
Anything else that escapes (``KeyError``, ``AssertionError``...) is a bug in
the generator and keeps its traceback.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Iterable, Sequence


@dataclass(frozen=True, slots=True)
class Pos:
    """A position in a source file; ``line`` and ``col`` are 1-based.

    ``shift`` is true when the characters of the scalar at this position map
    one to one onto columns of the line (a plain or quoted one-line YAML
    scalar), so that an offset into the scalar's text can be turned into a
    column with :meth:`at`.
    """

    path: str
    line: int
    col: int
    shift: bool = False
    quote: int = 0  # 1 when the scalar is quoted: its text starts one column later

    def at(self, offset: int) -> "Pos":
        """The position of character ``offset`` of the scalar that starts here."""
        if not self.shift or offset < 0:
            return self
        return Pos(self.path, self.line, self.col + self.quote + offset, False)

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}"


NOWHERE = Pos("<input>", 1, 1)


@dataclass(frozen=True, slots=True)
class Diagnostic:
    path: str
    line: int
    col: int
    message: str
    hint: str | None = None
    severity: str = "error"

    @staticmethod
    def at(pos: Pos, message: str, hint: str | None = None) -> "Diagnostic":
        return Diagnostic(pos.path, pos.line, pos.col, message, hint)

    def __str__(self) -> str:
        text = f"{self.path}:{self.line}:{self.col}: {self.severity}: {self.message}"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


class TextParseError(Exception):
    """A malformed piece of embedded text (a schema, a formula): ``message``
    about the character at ``offset`` of that text, with an optional hint.
    The caller turns it into a Diagnostic at the text's position in the YAML."""

    def __init__(self, message: str, offset: int = 0, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.hint = hint


class CodegenError(Exception):
    """All author errors of one run, raised once at the end of a phase."""

    def __init__(self, diagnostics: Sequence[Diagnostic]):
        self.diagnostics = tuple(diagnostics)
        super().__init__("\n".join(str(d) for d in self.diagnostics))

    def __reduce__(self):  # raised in a generator worker process, re-raised in the parent
        return (type(self), (self.diagnostics,))

    def render(self) -> str:
        n = len(self.diagnostics)
        lines = [str(d) for d in self.diagnostics]
        lines.append(f"{n} error{'s' if n != 1 else ''} generated.")
        return "\n".join(lines)


class DiagnosticSink:
    """Collects diagnostics; :meth:`check` raises them all at once."""

    def __init__(self) -> None:
        self.diagnostics: list[Diagnostic] = []

    def error(self, pos: Pos, message: str, hint: str | None = None) -> None:
        self.diagnostics.append(Diagnostic.at(pos, message, hint))

    def extend(self, diags: Iterable[Diagnostic]) -> None:
        self.diagnostics.extend(diags)

    def __bool__(self) -> bool:  # true when there are errors
        return bool(self.diagnostics)

    def __len__(self) -> int:
        return len(self.diagnostics)

    def check(self) -> None:
        if self.diagnostics:
            # stable order: file, then line, then column; duplicates once
            seen: set[Diagnostic] = set()
            unique = []
            for d in sorted(self.diagnostics, key=lambda d: (d.path, d.line, d.col)):
                if d not in seen:
                    seen.add(d)
                    unique.append(d)
            raise CodegenError(unique)


def did_you_mean(word: str, candidates: Iterable[str]) -> str | None:
    """``"did you mean 'x'?"`` for the closest candidate, or None."""
    matches = difflib.get_close_matches(word, sorted(set(candidates)), n=1, cutoff=0.6)
    return f"did you mean '{matches[0]}'?" if matches else None
