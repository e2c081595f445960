"""The project's files describe the system, not the history of its making.

A numbered round of work, a lettered slice of one or an issue number belongs
in `git log` and the issue tracker; in a file it dates the text and says
nothing to a reader who was not there. Every file git tracks (generated/
included, so a banner or a copied YAML comment is caught too) is read and
each line that matches HISTORY is reported as file:line.

The words are spelled below with a gap ("{}") so that this file does not
match its own pattern.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# a numbered round of work, a lettered slice, an issue number
HISTORY = re.compile(r"(?i){}s?[ -][0-9]|{}s? [A-Z]\b|{}s?[ -][0-9]+".format("session", "slice", "issue"))

# folders that are not the project's own text: research notes shared between
# checkouts (outside the repository; excluded here should one be linked in)
OUTSIDE = ("shared/",)


def _tracked_files() -> list[str]:
    """Paths git tracks under ROOT; skips the test when git or the checkout is absent."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    r = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True)
    if r.returncode != 0:
        pytest.skip("not a git checkout: " + r.stderr.decode(errors="replace").strip())
    return [p for p in r.stdout.decode().split("\0") if p and not p.startswith(OUTSIDE)]


def history_lines(text: str) -> list[tuple[int, str]]:
    """(1-based line number, line) of each line of text that names a round, slice or issue."""
    return [(i, line) for i, line in enumerate(text.splitlines(), 1) if HISTORY.search(line)]


@pytest.mark.parametrize("text, lines", [
    ("done in {} 5".format("session"), [1]),
    ("ok\n(see {} 19)\nok".format("Issue"), [2]),
    ("# ---- {} 6: NN operators ----".format("issue"), [1]),
    ("the NN {} G work".format("slice"), [1]),
    ("{}s 3 and 4".format("session"), [1]),
    ("the {}-6 block".format("issue"), [1]),
    # not history: words that only look alike
    ("a slice of the tensor; issue a warning; the session ends", []),
    ("x[1:3] is a slice. 5 sessions", []),
    ("issues: 0; session_5 = 1", []),
])
def test_history_lines_pattern(text, lines):
    assert [n for n, _ in history_lines(text)] == lines


def test_no_history_in_project_files():
    found = []
    for rel in _tracked_files():
        path = ROOT / rel
        if not path.is_file():  # deleted in the work tree, or a submodule
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:  # binary: no prose to check
            continue
        found += [f"{rel}:{n}: {line.strip()}" for n, line in history_lines(text)]
    assert not found, ("files that name a round of work, a slice or an issue number "
                       "(describe the system as it is instead):\n" + "\n".join(found))
