"""torchlet.compile: capture at the dispatcher, fuse pointwise chains and
row reductions from the ufunc formulas, compile each group as one C file.

Pipeline (docs/COMPILE.md): `capture` (a dispatch mode over fake tensors)
-> `graph` (SSA operator calls) -> `fusion` (groups: pointwise chains, row
kernels; everything else runs as its operator) -> `cgen` (C text from the
formula headers) -> `build` (gcc, disk cache) -> `plan` (the steps one call
runs) -> `api` (guards, the per-function cache, autograd, explain).
"""
