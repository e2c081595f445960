"""Include what you use, for the generated C (torchlet's own, not an
operator library's).

The C emitters render ``#include "tl_ops.h"``, the umbrella over every
operator family's header (``include/ops/<name>.h``). Including it made
every generated file depend on every operator: adding one recompiled about
500 objects. This pass replaces that line, in each generated ``.c`` file,
with ``tl_ops_base.h`` and the headers of just the families whose names the
file mentions, found by matching the file's identifiers against the names
each family header declares. The umbrella stays for hand-written code.
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


def include_what_you_use(files: dict[str, str]) -> dict[str, str]:
    """files (path -> text) with the umbrella include of every generated
    ``.c`` replaced by the family headers it needs."""
    owner: dict[str, set[str]] = {}
    for path, text in files.items():
        if path.startswith("include/ops/") and path.endswith(".h"):
            for name in declared_names(text):
                owner.setdefault(name, set()).add(path[len("include/"):])
    if not owner:
        return files
    out = dict(files)
    for path, text in files.items():
        if not path.endswith(".c") or UMBRELLA not in text:
            continue
        used = sorted({h for ident in set(_IDENT.findall(text)) for h in owner.get(ident, ())})
        lines = ['#include "tl_ops_base.h"', *(f'#include "{h}"' for h in used)]
        out[path] = text.replace(UMBRELLA, "\n".join(lines), 1)
    return out
