"""The CUDA indexing program: ``generated/cuda/index.cu`` (the prelude, the
parameter struct ``kernels/cuda/tl_cuda_index_params.h`` and the hand-written
kernel templates ``kernels/cuda/tl_cuda_index.cuh``, shared texts it includes
(cuda_program.py), then their ``extern "C"`` instantiations) and
``generated/cuda/index_cuda.c`` (the program's own text as C strings, its
kernels and the tables ``kernels/cuda/tl_cuda_index.c`` launches from).
Only the instantiations are generated, as for the reductions (reduce_cuda.py;
docs/CUDA.md).
"""

from __future__ import annotations

import textwrap

from . import EmitContext
from .cuda_program import C_COMMENT, host_source
from .ufunc import DTYPES
from .ufunc_cuda import _fix_lines

THREADS = 256   # kernels/cuda/tl_cuda_index.c: INDEX_THREADS

_REAL = DTYPES[:10]   # tl_dtype codes 0..9: the dtypes the CUDA kernels compute in
_FLOAT = ("Half", "BFloat16", "Float", "Double")
_CODE = {d.scalar_name: i for i, d in enumerate(DTYPES)}


def _compute(dtype: str) -> str:
    """the C++ type a dtype computes in: float for the 16-bit floats, int64 for integers and bool"""
    return {"Half": "float", "BFloat16": "float", "Float": "float", "Double": "double"}.get(dtype, "int64_t")


def _kernels() -> tuple[list[dict], dict[str, list]]:
    """every kernel ({name, call, note}) and the host tables {table: [kernel index or None per slot]}"""
    kernels: list[dict] = []
    tables: dict[str, list] = {}

    def add(table: str, slot: int, size: int, name: str, call: str, note: str) -> None:
        row = tables.setdefault(table, [None] * size)
        row[slot] = len(kernels)
        kernels.append({"name": name, "call": call, "note": note})

    for slot, b in enumerate((1, 2, 4, 8, 16)):
        add("gather", slot, 5, f"tl_index_gather_{b}", f"tl_ix_move<{b}, false>(p)", f"elements of {b} byte(s)")
    for slot, b in enumerate((1, 2, 4, 8, 16)):
        add("scatter", slot, 5, f"tl_index_scatter_{b}", f"tl_ix_move<{b}, true>(p)", f"elements of {b} byte(s)")
    for d in _REAL:
        c, t = _CODE[d.scalar_name], _compute(d.scalar_name)
        add("scatter_add", c, len(DTYPES), f"tl_index_scatter_add_{d.suffix}", f"tl_ix_scatter_add<{c}, {c}, {t}>(p)",
            d.scalar_name)
    add("count", 0, 1, "tl_index_count", "tl_ix_count(p)", "int32 counts")
    for d in _REAL:
        if d.scalar_name not in _FLOAT:
            continue
        c, t = _CODE[d.scalar_name], _compute(d.scalar_name)
        acc = _CODE["Double" if t == "double" else "Float"]
        add("embedding_backward", c, len(DTYPES), f"tl_embedding_backward_{d.suffix}",
            f"tl_ix_scatter_add<{acc}, {c}, {t}>(p)", f"{d.scalar_name} into a {t} accumulator")
        add("nll_loss_forward", c, len(DTYPES), f"tl_nll_loss_forward_{d.suffix}", f"tl_ix_nll_fwd<{c}, {t}>(p)",
            d.scalar_name)
        add("nll_loss_backward", c, len(DTYPES), f"tl_nll_loss_backward_{d.suffix}", f"tl_ix_nll_bwd<{c}, {t}>(p)",
            d.scalar_name)
    return kernels, tables


def render_index_program(ctx: EmitContext) -> dict[str, str]:
    kernels, tables = _kernels()
    cu = ctx.render("index_cuda.cu.j2", C_COMMENT, kernels=kernels, threads=THREADS)
    cu = _fix_lines(cu, "generated/cuda/index.cu").rstrip("\n") + "\n"
    rows = [(name, len(row), textwrap.fill(", ".join("NULL" if i is None else f"&tl_index_cuda_fns[{i}]" for i in row),
                                           110, initial_indent="    ", subsequent_indent="    "))
            for name, row in tables.items()]
    host = ctx.render("index_cuda_host.c.j2", C_COMMENT, source=host_source("tl_index_cuda", "generated/cuda/index.cu", cu),
                      kernels=kernels, tables=rows)
    return {"cuda/index.cu": cu, "cuda/index_cuda.c": host}
