"""repr(Tensor) in PyTorch's style (simplified from torch/_tensor_str.py)."""
from __future__ import annotations

import math

import numpy as np

PRECISION = 4
THRESHOLD = 1000
EDGEITEMS = 3
LINEWIDTH = 80


class _Formatter:
    def __init__(self, values: np.ndarray, floating: bool):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)
        if not floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(str(v)))
            return
        flat = flat.astype(np.float64)
        finite = flat[np.isfinite(flat)]
        if finite.size == 0:
            self._fmt = lambda v: f"{v:.0f}."  # noqa: E731
            return
        nonzero = np.abs(finite[finite != 0])
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        if self.int_mode:
            if nonzero.size and nonzero.max() > 1e8:
                self.sci_mode = True
                fmt = lambda v: f"{v:.{PRECISION}e}"  # noqa: E731
            else:
                fmt = lambda v: f"{v:.0f}."  # noqa: E731
        else:
            if nonzero.size and (nonzero.max() / nonzero.min() > 1000.0 or nonzero.max() > 1e8
                                 or nonzero.min() < 1e-4):
                self.sci_mode = True
                fmt = lambda v: f"{v:.{PRECISION}e}"  # noqa: E731
            else:
                fmt = lambda v: f"{v:.{PRECISION}f}"  # noqa: E731
        self._fmt = fmt
        # like torch: widths come from the nonzero finite values only
        for v in finite[finite != 0].tolist():
            self.max_width = max(self.max_width, len(fmt(v)))


    @staticmethod
    def _nonfinite(v):
        return "nan" if v != v else ("inf" if v > 0 else "-inf")

    def format(self, v) -> str:
        if not self.floating:
            s = str(v)
        else:
            v = float(v)
            s = self._fmt(v) if math.isfinite(v) else self._nonfinite(v)
        return " " * (self.max_width - len(s)) + s


class _ComplexFormatter:
    """PyTorch's complex printing: the real and imaginary parts each get a
    formatter of their own; an element is real + signed imaginary + "j"."""

    def __init__(self, values: np.ndarray):
        self.real = _Formatter(values.real, True)
        self.imag = _Formatter(values.imag, True)
        self.max_width = self.real.max_width + self.imag.max_width + 1

    def format(self, v) -> str:
        v = complex(v)
        real_str = self.real.format(v.real)
        imag_str = (self.imag.format(v.imag) + "j").lstrip()
        if imag_str[0] in "+-":   # negative numbers, -0.0
            return real_str + imag_str
        return real_str + "+" + imag_str


def _summarized_values(a: np.ndarray) -> np.ndarray:
    if a.ndim == 0:
        return a.reshape(1)
    if a.shape[0] > 2 * EDGEITEMS:
        parts = [_summarized_values(a[i]) for i in list(range(EDGEITEMS)) + list(range(a.shape[0] - EDGEITEMS, a.shape[0]))]
    else:
        parts = [_summarized_values(a[i]) for i in range(a.shape[0])]
    return np.concatenate(parts) if parts else a.reshape(-1)


def _fmt(a: np.ndarray, indent: int, f: _Formatter, summarize: bool) -> str:
    if a.ndim == 0:
        return f.format(a.item())
    n = a.shape[0]
    if a.ndim == 1:
        if summarize and n > 2 * EDGEITEMS:
            items = [f.format(x) for x in a[:EDGEITEMS].tolist()] + [" ..."] + \
                    [f.format(x) for x in a[n - EDGEITEMS:].tolist()]
        else:
            items = [f.format(x) for x in a.tolist()]
        per_line = max(1, (LINEWIDTH - indent) // (f.max_width + 2))
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    if summarize and n > 2 * EDGEITEMS:
        rows = [_fmt(a[i], indent + 1, f, summarize) for i in range(EDGEITEMS)] + ["..."] + \
               [_fmt(a[i], indent + 1, f, summarize) for i in range(n - EDGEITEMS, n)]
    else:
        rows = [_fmt(a[i], indent + 1, f, summarize) for i in range(n)]
    sep = "," + "\n" * (a.ndim - 1) + " " * (indent + 1)
    return "[" + sep.join(rows) + "]"


def tensor_repr(t) -> str:
    from . import _dtype as D

    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    dt = t.dtype
    dev = t.device
    if dev.type != "cpu":
        suffixes.append(f"device='{dev}'")
    if dev.type == "meta":
        body = "..."
        suffixes.append(f"size={tuple(t.shape)}")
    elif t.numel() == 0:
        body = "[]"
        if t.ndim != 1:
            suffixes.append(f"size={tuple(t.shape)}")
    else:
        from . import _rt
        if dev.type == "cuda":   # PyTorch prints a CUDA tensor from a host copy (a sync point)
            t = _rt.to(t, device="cpu")
        if dt is D.bfloat16:
            a = _rt.to(t, D.float32).numpy()
        else:
            a = t.numpy()
        summarize = a.size > THRESHOLD
        vals = _summarized_values(a) if summarize else a
        if dt.is_complex:
            f = _ComplexFormatter(np.asarray(vals))
        else:
            f = _Formatter(np.asarray(vals), dt.is_floating_point)
        body = _fmt(a, indent, f, summarize)
    if dt not in (D.get_default_dtype(), D.get_default_complex_dtype(), D.int64, D.bool_):
        suffixes.append(f"dtype={dt!r}")
    elif dev.type == "meta" or (t.numel() == 0 and dt is not D.get_default_dtype()):
        if dt is not D.get_default_dtype():
            suffixes.append(f"dtype={dt!r}")
    fn = t.grad_fn if hasattr(type(t), "grad_fn") else None  # autograd (torchlet.autograd)
    if fn is not None:
        suffixes.append(f"grad_fn=<{type(fn).__name__}>")  # PyTorch: the class name (CopySlices, Error)
    elif getattr(t, "requires_grad", False):
        suffixes.append("requires_grad=True")
    # PyTorch's _str_intern: a suffix that would pass the line width starts a new line
    last_line = len(body) - body.rfind("\n") + 1
    for suffix in suffixes:
        if last_line + len(suffix) + 2 > LINEWIDTH:
            body += ",\n" + " " * len(prefix) + suffix
            last_line = len(prefix) + len(suffix)
        else:
            body += ", " + suffix
            last_line += len(suffix) + 2
    return prefix + body + ")"
