"""A CUDA program's text as its own pieces and shared texts (docs/CUDA.md,
"How a program's text is assembled").

A generated program (``generated/cuda/*.cu``) holds the text that is its own
and, where a text shared with other programs goes (the prelude
``kernels/cuda/tl_cuda_prelude.cuh``, a parameter struct, the reduction and
indexing kernel templates), one line ``#include "NAME"``, followed by a
``#line`` directive that keeps the .cu file's line numbers. NVRTC gets one
self-contained source, the program *composed*: every such line replaced by
``#line 1 "<dir>/NAME"`` and the text of NAME, looked up in
:data:`SHARED_DIRS` in order. The host side embeds only the program's own
pieces; each shared text is embedded once, in ``generated/cuda/
tl_cuda_parts.c``, and a program's ``tl_cuda_program.parts`` lists its pieces
in order, which the runtime joins before compiling. So the compiled text and
the cache key over it are the same as ``torchlet.cuda.nvrtc.program_source``
composes from the .cu file (the prebuild), and the host shim compiles the .cu
file itself with those folders on its include path.
"""

from __future__ import annotations

import re
import textwrap

from .ufunc import ROOT

C_COMMENT = ("/*", " * ", " */")
#: where a program's ``#include "NAME"`` finds its shared text, in order
SHARED_DIRS = ("kernels/cuda", "generated/cuda")
_INCLUDE_RE = re.compile(r'^#include "([^"/]+)"$')
_ANY_INCLUDE_RE = re.compile(r"^\s*#\s*include\b", re.M)


def symbol(name: str) -> str:
    """the C array holding shared text NAME (generated/cuda/tl_cuda_parts.c)"""
    return "tl_cuda_text_" + re.sub(r"\W", "_", name)


def shared_text(name: str, generated: dict[str, str]) -> tuple[str, str]:
    """(path, piece) of shared text NAME: the piece is what replaces its
    ``#include`` line. ``generated``: this run's outputs (``cuda/<file>``),
    read instead of the files under generated/ (they may be stale)."""
    for d in SHARED_DIRS:
        rel = f"{d}/{name}"
        if d.startswith("generated/"):
            text = generated.get(rel.removeprefix("generated/"))
        else:
            text = (ROOT / rel).read_text() if (ROOT / rel).is_file() else None
        if text is None:
            continue
        if _ANY_INCLUDE_RE.search(text):   # NVRTC gets no file system: shared texts include nothing
            raise ValueError(f"{rel}: a shared CUDA text must not #include anything")
        return rel, f'#line 1 "{rel}"\n' + text.rstrip("\n") + "\n"
    raise ValueError(f'#include "{name}": no shared CUDA text of that name in {", ".join(SHARED_DIRS)}')


def split(cu: str) -> list[tuple[bool, str]]:
    """the program's pieces in order: (False, own text) or (True, shared name)"""
    pieces: list[tuple[bool, str]] = []
    own: list[str] = []
    for line in cu.split("\n")[:-1] if cu.endswith("\n") else cu.split("\n"):
        m = _INCLUDE_RE.match(line)
        if m is None:
            own.append(line + "\n")
            continue
        if own:
            pieces.append((False, "".join(own)))
            own = []
        pieces.append((True, m.group(1)))
    if own:
        pieces.append((False, "".join(own)))
    return pieces


def compose(cu: str, generated: dict[str, str]) -> str:
    """the text NVRTC compiles (what the runtime's join of the parts gives)"""
    return "".join(shared_text(t, generated)[1] if shared else t for shared, t in split(cu))


def c_string(text: str) -> str:
    """text as a C string literal, one source line per literal line"""
    out = []
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for line in lines:
        esc = line.replace("\\", "\\\\").replace('"', '\\"')
        out.append(f'    "{esc}\\n"')
    return "\n".join(out)


def host_source(prefix: str, cu_path: str, cu: str) -> str:
    """C declarations of a program's pieces: its own texts as string literals
    and ``<prefix>_parts``, the NULL-terminated list the tl_cuda_program names"""
    out = [f"/* {cu_path} in pieces: its own text, and the shared texts it includes (tl_cuda_parts.c) */"]
    names = []
    for shared, text in split(cu):
        if shared:
            names.append(symbol(text))
            continue
        var = f"{prefix}_source_{len(names)}"
        out.append(f"static const char {var}[] =\n{c_string(text)};")
        names.append(var)
    out.append(f"static const char *const {prefix}_parts[] = {{\n"
               + textwrap.fill(", ".join(names + ["NULL"]), 110, initial_indent="    ", subsequent_indent="    ")
               + "\n};")
    return "\n".join(out)


def shared_names(files: dict[str, str]) -> list[str]:
    """every shared text some generated program includes, sorted"""
    return sorted({t for path, cu in files.items() if path.startswith("cuda/") and path.endswith(".cu")
                   for shared, t in split(cu) if shared})


def render_shared_texts(ctx, files: dict[str, str]) -> dict[str, str]:
    """generated/cuda/tl_cuda_parts.{h,c}: each shared text once"""
    parts = []
    for name in shared_names(files):
        rel, piece = shared_text(name, files)
        parts.append({"name": name, "path": rel, "symbol": symbol(name), "text": c_string(piece)})
    return {"cuda/tl_cuda_parts.h": ctx.render("cuda_parts.h.j2", C_COMMENT, parts=parts),
            "cuda/tl_cuda_parts.c": ctx.render("cuda_parts.c.j2", C_COMMENT, parts=parts)}
