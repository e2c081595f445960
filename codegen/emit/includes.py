"""Include what you use, for the generated C (torchlet's own, not an
operator library's).

The C emitters render ``#include "tl_ops.h"``, the umbrella over every
operator family's header (``include/ops/<name>.h``). Including it made
every generated file depend on every operator: adding one recompiled about
500 objects. This pass replaces that line, in each generated ``.c`` file,
with ``tl_ops_base.h`` and the headers of just the families whose names the
file mentions, found by matching the file's identifiers against the names
each family header declares.

Hand-written C (``kernels/``, ``autograd/``, ``runtime/src``) gets the same
treatment from ``python -m codegen includes`` (``make includes``): its
umbrella include, or the block a previous run wrote (``MARKER`` and the
``#include "ops/..."`` lines after it), becomes the headers the file uses
now. ``--check`` (part of ``make check-generated``) fails when a block is
stale, so adding an operator recompiles only the files that call it. The
umbrella stays for operator libraries and outside code.
"""
from __future__ import annotations

import re

UMBRELLA = '#include "tl_ops.h"'
# every declared name starts with tl_ (declared_names). No leading \b: a literal
# start lets the regex engine skip ahead to each "tl_" (5x faster over the
# corpus' 24 MB of C); a name ending in tl_... (my_tl_x) at worst includes one
# more header
_IDENT = re.compile(r"tl_\w+")
# the names a family header declares: entry points / prototypes (NAME(...)),
# kernel typedefs ((*NAME)(...)), handles (extern tl_operator *NAME;), structs
_DECLS = (
    re.compile(r"^(?:TL_WEAK\s+)?[\w\s]+?[\s*](\w+)\s*\(", re.M),
    re.compile(r"\(\s*\*\s*(\w+)\s*\)\s*\("),
    re.compile(r"^extern\s+[\w\s]+?[\s*](\w+)\s*;", re.M),
    re.compile(r"^}\s*(\w+)\s*;", re.M),
    re.compile(r"^(?:typedef\s+)?struct\s+(\w+)", re.M),
)


def declared_names(header: str) -> set[str]:
    code = re.sub(r"/\*.*?\*/", "", header, flags=re.S)
    code = "\n".join(line for line in code.splitlines() if not line.lstrip().startswith("#"))
    # every name the generator declares starts with tl_ (api_c); the patterns
    # also meet C's own words in multi-line declarations
    return {n for pat in _DECLS for m in pat.finditer(code) if (n := m.group(1)).startswith("tl_")}


def owner_map(headers: dict[str, str]) -> dict[str, set[str]]:
    """declared name -> the family headers (``ops/<name>.h``) declaring it,
    from headers given as path (``include/ops/<name>.h``) -> text."""
    owner: dict[str, set[str]] = {}
    for path, text in headers.items():
        if path.startswith("include/ops/") and path.endswith(".h"):
            for name in declared_names(text):
                owner.setdefault(name, set()).add(path[len("include/"):])
    return owner


def headers_used(text: str, owner: dict[str, set[str]]) -> list[str]:
    return sorted({h for ident in set(_IDENT.findall(text)) for h in owner.get(ident, ())})


def include_what_you_use(files: dict[str, str]) -> dict[str, str]:
    """files (path -> text) with the umbrella include of every generated
    ``.c`` replaced by the family headers it needs."""
    owner = owner_map(files)
    if not owner:
        return files
    out = dict(files)
    for path, text in files.items():
        if not path.endswith(".c") or UMBRELLA not in text:
            continue
        lines = ['#include "tl_ops_base.h"', *(f'#include "{h}"' for h in headers_used(text, owner))]
        out[path] = text.replace(UMBRELLA, "\n".join(lines), 1)
    return out


# hand-written files: the first line of the block this pass keeps, then one
# line per family header
MARKER = '#include "tl_ops_base.h" /* + the operator headers used: make includes */'
_BLOCK = re.compile(r'^(?:' + re.escape(UMBRELLA) + r'|' + re.escape(MARKER)
                    + r')[ \t]*\n(?:#include "ops/\w+\.h"[ \t]*\n)*', re.M)


def has_block(text: str) -> bool:
    """Whether a hand-written file has an operator-header block (or the umbrella)."""
    return _BLOCK.search(text) is not None


def handwritten_block(text: str, owner: dict[str, set[str]], expanded: str = "") -> str | None:
    """text with its operator-header block rewritten for what it uses now
    (its own text, plus ``expanded``: what its macros expand to); None when
    the file has no such block (it includes no operator header)."""
    m = _BLOCK.search(text)
    if m is None:
        return None
    rest = text[:m.start()] + text[m.end():]
    block = "".join(f"{line}\n" for line in
                    [MARKER, *(f'#include "{h}"' for h in headers_used(rest + expanded, owner))])
    return text[:m.start()] + block + text[m.end():]


_LINE_MARKER = re.compile(r'^# \d+ "(.*)"')


def macro_expansion(text: str, include_dirs: list[str], cc: str = "cc") -> str:
    """The file's own lines after the preprocessor, for a file that pastes
    names together (``tl_ops_##op``): the names are not in its text. The
    block becomes the base header only (macros need no declarations), so
    this is fast. Raises RuntimeError with the compiler's message on failure."""
    if "##" not in text:
        return ""
    m = _BLOCK.search(text)
    src = text if m is None else text[:m.start()] + '#include "tl_ops_base.h"\n' + text[m.end():]
    import subprocess
    p = subprocess.run([cc, "-E", "-x", "c", "-", *(f"-I{d}" for d in include_dirs)],
                       input=src, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip())
    own, out = True, []
    for line in p.stdout.splitlines():
        lm = _LINE_MARKER.match(line)
        if lm:
            own = lm.group(1) == "<stdin>"
        elif own:
            out.append(line)
    return "\n".join(out)
