"""The CUDA reduction program: ``generated/cuda/reduce.cu`` (one CUDA C++
program: the prelude, the parameter struct ``kernels/cuda/
tl_cuda_reduce_params.h`` and the hand-written kernel templates ``kernels/cuda/
tl_cuda_reduce.cuh``, shared texts it includes (cuda_program.py), then one
``extern "C"`` pair of kernels per operator and dtype) and ``generated/cuda/
reduce_cuda.c`` (the program's own text as C strings, its kernels and the
table ``kernels/cuda/tl_cuda_reduce.c`` launches from).

The pointwise emitter renders formulas; reductions are block-cooperative
(shared memory, warp shuffles), so their bodies are written by hand and only
the instantiations are generated (docs/CUDA.md).
"""

from __future__ import annotations

from . import EmitContext
from .cuda_program import C_COMMENT, host_source
from .ufunc import DTYPES
from .ufunc_cuda import _fix_lines

THREADS = 512   # tl_cuda_reduce_params.h: TL_CUDA_REDUCE_MAX_THREADS

#: the template argument naming each dtype's storage (tl_cuda_reduce.cuh)
STORAGE = {"Bool": "tl_rd_bool", "Byte": "uint8_t", "Char": "int8_t", "Short": "int16_t", "Int": "int32_t",
           "Long": "int64_t", "Half": "tl_rd_f16", "BFloat16": "tl_rd_bf16", "Float": "float", "Double": "double"}
_FLOAT = ("Half", "BFloat16", "Float", "Double")
#: operators in TL_CUDA_REDUCE_<OP> order (kernels/cuda/tl_cuda_reduce.h): (name, template, dtypes)
OPS = (
    ("sum", "tl_rd_sum<{T}>", tuple(STORAGE)),
    ("mean", "tl_rd_mean<{T}>", _FLOAT),
    ("amax", "tl_rd_extreme<{T}, true>", tuple(STORAGE)),
    ("amin", "tl_rd_extreme<{T}, false>", tuple(STORAGE)),
    ("argmax", "tl_rd_arg<{T}, true>", tuple(STORAGE)),   # bool: max.dim / min.dim (argmax's meta refuses it)
    ("argmin", "tl_rd_arg<{T}, false>", tuple(STORAGE)),
    ("prod", "tl_rd_prod<{T}>", tuple(STORAGE)),
    ("var", "tl_rd_welford<{T}, false>", _FLOAT),
    ("std", "tl_rd_welford<{T}, true>", _FLOAT),
    ("logsumexp", "tl_rd_lse<{T}>", _FLOAT),
    ("any", "tl_rd_logical<{T}, true>", tuple(STORAGE)),
    ("all", "tl_rd_logical<{T}, false>", tuple(STORAGE)),
    ("norm2", "tl_rd_norm<{T}, 0>", _FLOAT),
    ("norm1", "tl_rd_norm<{T}, 1>", _FLOAT),
    ("norm_inf", "tl_rd_norm<{T}, 2>", _FLOAT),
    ("norm_neginf", "tl_rd_norm<{T}, 3>", _FLOAT),
    ("norm0", "tl_rd_norm<{T}, 4>", _FLOAT),
    ("norm_p", "tl_rd_norm_p<{T}>", _FLOAT),
    ("nansum", "tl_rd_nansum<{T}>", _FLOAT),
)
#: the scans in TL_CUDA_SCAN_<OP> order (kernels/cuda/tl_cuda_reduce.h): (name, operator), every dtype
SCANS = (("cumsum", "tl_rd_sum<{T}>"), ("cumprod", "tl_rd_prod<{T}>"))
#: layer_norm's kernels in TL_CUDA_LAYER_NORM_<KIND> order (kernels/cuda/tl_cuda_reduce.h): (name, template)
LAYER_NORM = (("layer_norm", "tl_rd_layer_norm"), ("layer_norm_backward", "tl_rd_layer_norm_bwd"),
              ("layer_norm_backward_wb", "tl_rd_layer_norm_bwd_wb"))
_COMPUTE_BYTES = {"Bool": 1, "Byte": 1, "Char": 1, "Short": 2, "Int": 4, "Long": 8, "Half": 4, "BFloat16": 4,
                  "Float": 4, "Double": 8}


def acc_bytes(op: str, dtype: str) -> int:
    """bytes of one partial accumulator (the combine pass's input)"""
    wide = 4 if dtype in ("Half", "BFloat16", "Float") else 8   # the sum's accumulator
    if op in ("sum", "mean", "prod", "nansum") or op.startswith("norm") and op != "norm_p":
        return wide
    if op in ("argmax", "argmin"):
        return 16   # (value, int64 index), 8-aligned
    if op in ("var", "std"):
        return 16 if wide == 4 else 32   # (mean, m2, nf, int32 n)
    if op in ("logsumexp", "norm_p"):
        return 2 * wide   # (sum, row max or p)
    if op in ("any", "all"):
        return 1
    return _COMPUTE_BYTES[dtype]


def _softmax_kernels(suffix: str) -> list[dict]:
    """softmax / log_softmax (suffix "") or their backward ("_backward") per floating dtype, index 2 * i + log"""
    return [{"name": f"tl_{'log_' if log else ''}softmax{suffix}_{d.suffix}", "T": STORAGE[d.scalar_name],
             "log": "true" if log else "false", "dtype": d.scalar_name, "index": 2 * i + log}
            for i, d in enumerate(d for d in DTYPES if d.scalar_name in _FLOAT) for log in (0, 1)]


def render_reduce_program(ctx: EmitContext) -> dict[str, str]:
    kernels = []
    table = []
    for op, tmpl, dtypes in OPS:
        row = []
        for d in DTYPES:
            if d.scalar_name not in dtypes:
                row.append(None)
                continue
            k = {"name": f"tl_reduce_{op}_{d.suffix}", "op": tmpl.format(T=STORAGE[d.scalar_name]),
                 "T": STORAGE[d.scalar_name], "dtype": d.scalar_name, "acc": acc_bytes(op, d.scalar_name),
                 "index": len(kernels)}
            kernels.append(k)
            row.append(k)
        table.append((op, row))
    softmax = _softmax_kernels("")
    softmax_bwd = _softmax_kernels("_backward")
    scan = [{"name": f"tl_{op}_{d.suffix}", "op": tmpl.format(T=STORAGE[d.scalar_name]), "T": STORAGE[d.scalar_name],
             "dtype": d.scalar_name} for op, tmpl in SCANS for d in DTYPES if d.scalar_name in STORAGE]
    for i, k in enumerate(scan):
        k["index"] = i
    per_dtype = len(scan) // len(SCANS)   # [kind][tl_dtype]: the storage dtypes lead tl_dtype's order
    scan_table = [[scan[i * per_dtype + j]["index"] if j < per_dtype else None for j in range(len(DTYPES))]
                  for i in range(len(SCANS))]
    norm = [{"name": f"tl_{kind}_{d.suffix}", "fn": fn, "T": STORAGE[d.scalar_name], "dtype": d.scalar_name,
             "kind": i, "index": 3 * j + i}
            for j, d in enumerate(d for d in DTYPES if d.scalar_name in _FLOAT)
            for i, (kind, fn) in enumerate(LAYER_NORM)]
    cu = ctx.render("reduce_cuda.cu.j2", C_COMMENT, kernels=kernels, softmax=softmax, softmax_bwd=softmax_bwd,
                    norm=norm, scan=scan, threads=THREADS)
    cu = _fix_lines(cu, "generated/cuda/reduce.cu").rstrip("\n") + "\n"
    host = ctx.render("reduce_cuda_host.c.j2", C_COMMENT, source=host_source("tl_reduce_cuda", "generated/cuda/reduce.cu",
                                                                             cu), kernels=kernels, table=table,
                      softmax=softmax, softmax_bwd=softmax_bwd, norm=norm, scan=scan, scan_table=scan_table)
    return {"cuda/reduce.cu": cu, "cuda/reduce_cuda.c": host}
