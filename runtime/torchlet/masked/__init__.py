"""torchlet.masked: PyTorch's torch.masked reductions and normalizations over
an explicit boolean mask (strided tensors), as Python composites over
torchlet operators.

Masked-out elements are replaced by the operation's identity (0 for sum, 1
for prod, -inf / the dtype's minimum for amax, argmax, logsumexp, logaddexp
and the softmax family, +inf / the maximum for amin, argmin and softmin)
before the ordinary operator runs, so a fully masked-out slice gives the
identity. mean, var and std divide by the number of masked-in elements (nan
where there are none); norm fills 0 (+inf for ord=-inf); normalize divides
the filled input by its masked norm. The mask broadcasts to the input (it may
not have more dimensions) and is read as bool. docs/MASKED.md."""
from __future__ import annotations

import torchlet as _tl

__all__ = ["amax", "amin", "argmax", "argmin", "cumprod", "cumsum", "log_softmax", "logaddexp", "logsumexp",
           "mean", "median", "norm", "normalize", "prod", "softmax", "softmin", "std", "sum", "var"]

_SMALL_INTS = ("uint8", "bool", "int8", "int16", "int32")
_INT_RANGE = {"uint8": (0, 255), "int8": (-128, 127), "int16": (-(1 << 15), (1 << 15) - 1),
              "int32": (-(1 << 31), (1 << 31) - 1), "int64": (-(1 << 63), (1 << 63) - 1)}


def _dtname(dt) -> str:
    return str(dt).rsplit(".", 1)[-1]


def _identity(op: str, input, ord=2.0):
    """The value that leaves op's result unchanged (torch.masked's
    _reduction_identity), as a 0-dim tensor of input's dtype; None when
    the operation has none (mean, var, std)."""
    dt = input.dtype
    fp = dt.is_floating_point
    if op in ("sum", "cumsum"):
        v = 0
    elif op in ("prod", "cumprod"):
        v = 1
    elif op in ("amax", "argmax", "logaddexp", "logsumexp"):
        if fp:
            v = float("-inf")
        elif _dtname(dt) in _INT_RANGE:
            v = _INT_RANGE[_dtname(dt)][0]
        else:
            raise NotImplementedError(f"identity of {op} on {dt} input")
    elif op in ("amin", "argmin"):
        if fp:
            v = float("inf")
        elif _dtname(dt) in _INT_RANGE:
            v = _INT_RANGE[_dtname(dt)][1]
        else:
            raise NotImplementedError(f"identity of {op} on {dt} input")
    elif op == "median":  # nanmedian skips NaN: masked-out elements are NaN
        v = float("nan")
    elif op == "norm":
        if ord == float("-inf"):
            if not fp:
                raise AssertionError(f"input must be floating point, got {dt}")
            v = float("inf")
        else:
            v = 0
    else:
        return None
    return _tl.tensor(v, dtype=dt)


def _canonical_dim(dim, ndim: int) -> tuple:
    """dim as a sorted tuple of non-negative dims (None or () -> all)."""
    if dim == ():
        dim = None
    if dim is None:
        return tuple(range(ndim))
    ndim = max(ndim, 1)
    dims: list = []
    for d in ((dim,) if isinstance(dim, int) else dim):
        if d in dims:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        if d >= ndim or d < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {d})")
        dims.append(d % ndim)
    return tuple(sorted(dims))


def _input_mask(input, mask):
    """mask broadcast to input's shape, as bool."""
    if mask is None:
        raise ValueError("_input_mask requires explicit mask")
    if tuple(mask.shape) != tuple(input.shape):
        if mask.ndim > input.ndim:
            raise IndexError("_input_mask expected broadcastable mask (got mask dimensionality higher than of the input)")
        mask = _tl.broadcast_to(mask.clone(), input.shape)
    return mask.to(dtype=_tl.bool)


def _fill(op: str, input, mask, ord=2.0):
    """input with its masked-out elements replaced by op's identity."""
    if mask is None:
        return input
    return _tl.where(_input_mask(input, mask), input, _identity(op, input, ord))


def _sum_dtype(input, dtype):
    if dtype is None:
        dtype = _tl.int64 if _dtname(input.dtype) in _SMALL_INTS else input.dtype
    return dtype


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Sum of the masked-in elements over dim (all when None)."""
    dtype = _sum_dtype(input, dtype)
    dim_ = _canonical_dim(dim, input.ndim)
    return _tl.sum(_fill("sum", input, mask), list(dim_), bool(keepdim), dtype=dtype)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Product of the masked-in elements over dim (all when None)."""
    dtype = _sum_dtype(input, dtype)
    dim_ = _canonical_dim(dim, input.ndim)
    r = _fill("prod", input, mask).to(dtype=dtype)
    for d in reversed(dim_):
        r = r.prod(dim=d, keepdim=bool(keepdim))
    return r


def cumsum(input, dim, *, dtype=None, mask=None):
    """Cumulative sum along dim, masked-out elements counting as 0."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return _tl.cumsum(_fill("sum", input, mask), d, dtype=dtype).to(dtype=dtype)


def cumprod(input, dim, *, dtype=None, mask=None):
    """Cumulative product along dim, masked-out elements counting as 1."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return _tl.cumprod(_fill("prod", input, mask), d, dtype=dtype).to(dtype=dtype)


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Largest masked-in element over dim."""
    dtype = input.dtype if dtype is None else dtype
    x = _fill("amax", input, mask)
    return _tl.amax(x, list(_canonical_dim(dim, x.ndim)), bool(keepdim)).to(dtype=dtype)


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Smallest masked-in element over dim."""
    dtype = input.dtype if dtype is None else dtype
    x = _fill("amin", input, mask)
    return _tl.amin(x, list(_canonical_dim(dim, x.ndim)), bool(keepdim)).to(dtype=dtype)


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Index of the largest masked-in element along dim."""
    dtype = input.dtype if dtype is None else dtype
    return _tl.argmax(_fill("argmax", input, mask), dim, bool(keepdim)).to(dtype=dtype)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Index of the smallest masked-in element along dim."""
    dtype = input.dtype if dtype is None else dtype
    return _tl.argmin(_fill("argmin", input, mask), dim, bool(keepdim)).to(dtype=dtype)


def _count_and_total(input, dim, keepdim, dtype, mask):
    """The number of masked-in elements and their sum over dim."""
    if mask is None:
        count = sum(_tl.ones(tuple(input.shape), dtype=_tl.int64), dim, keepdim=keepdim)
        return count, sum(input, dim, keepdim=keepdim, dtype=dtype), None
    inmask = _input_mask(input, mask)
    count = inmask.sum(dim=dim, keepdim=bool(keepdim))
    return count, sum(input, dim, keepdim=keepdim, dtype=dtype, mask=inmask), inmask


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Mean of the masked-in elements over dim (nan where none is)."""
    source = "Optional"
    if dtype is None:
        dtype, source = input.dtype, "Input"
    if not dtype.is_floating_point:
        raise ValueError(f"mean(): Could not infer output dtype. {source} dtype must be either "
                         f"a floating point or complex dtype. Got: {dtype}")
    count, total, _ = _count_and_total(input, dim, keepdim, dtype, mask)
    return total / count


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    """The median over one dim of the masked-in elements: masked-out ones become
    NaN and nanmedian skips them. A row with none left is NaN, which a
    non-float input cannot hold (PyTorch's ValueError)."""
    if dtype is None:
        dtype = input.dtype
    d = _canonical_dim(dim, input.ndim)[0]
    is_float = input.dtype.is_floating_point
    x = input if is_float else input.to(dtype=_tl.float32)
    out = _tl.nanmedian(_fill("median", x, mask), d, bool(keepdim)).values
    if is_float:
        return out
    if bool(_tl.isnan(out).any()):
        raise ValueError("masked median expects no fully masked out rows if dtype is not floating point")
    return out.to(dtype=dtype)


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """log(sum(exp)) of the masked-in elements over dim."""
    dtype = input.dtype if dtype is None else dtype
    dim_ = _canonical_dim(dim, input.ndim)
    return _tl.logsumexp(_fill("logsumexp", input, mask), list(dim_), keepdim=keepdim).to(dtype=dtype)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):
    """log(exp(input) + exp(other)), each masked by its own mask."""
    dtype = input.dtype if dtype is None else dtype
    return _tl.logaddexp(_fill("logaddexp", input, input_mask), _fill("logaddexp", other, other_mask)).to(dtype=dtype)


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Vector norm of the masked-in elements over dim."""
    dtype = input.dtype if dtype is None else dtype
    x = _fill("norm", input, mask, ord)
    return _tl.linalg.vector_norm(x, ord, list(_canonical_dim(dim, input.ndim)), bool(keepdim), dtype=dtype)


def _std_var(input, dim, unbiased, correction_opt, keepdim, dtype, mask, take_sqrt):
    if unbiased is not None and correction_opt is not None:
        raise AssertionError("Only one of unbiased and correction may be given")
    correction = 1.0
    if unbiased is not None:
        correction = 1.0 if unbiased else 0.0
    if correction_opt is not None:
        correction = float(correction_opt)
    if dtype is None:
        dtype = input.dtype if input.dtype.is_floating_point else _tl.float32
    compute_dtype = dtype if dtype.is_floating_point else _tl.float32
    count, sample_total, inmask = _count_and_total(input, dim, True, dtype, mask)
    x = input - sample_total / count
    total = sum(x * x, dim, keepdim=keepdim, dtype=compute_dtype, mask=inmask)
    if not keepdim:
        count = count.reshape(tuple(total.shape))
    if correction != 0:
        count = count.to(compute_dtype) - correction
        count = _tl.maximum(count, count.new_zeros([]))
    out = (total / count).to(dtype=dtype)
    return _tl.sqrt(out) if take_sqrt else out


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None):
    """Variance of the masked-in elements over dim (nan where none is)."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, False)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None):
    """Standard deviation of the masked-in elements over dim."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, True)


def _softmax_family(fn, identity_op):
    def op(input, dim, *, dtype=None, mask=None):
        dtype = input.dtype if dtype is None else dtype
        d = _canonical_dim(dim, input.ndim)[0]
        return fn(_fill(identity_op, input, mask), d, dtype=dtype)
    return op


def softmax(input, dim, *, dtype=None, mask=None):
    """softmax along dim, masked-out elements filled with -inf (their probability is 0)."""
    return _softmax_family(_tl.nn.functional.softmax, "amax")(input, dim, dtype=dtype, mask=mask)


def log_softmax(input, dim, *, dtype=None, mask=None):
    """log_softmax along dim, masked-out elements filled with -inf."""
    return _softmax_family(_tl.nn.functional.log_softmax, "amax")(input, dim, dtype=dtype, mask=mask)


def softmin(input, dim, *, dtype=None, mask=None):
    """softmin along dim, masked-out elements filled with +inf."""
    return _softmax_family(_tl.nn.functional.softmin, "amin")(input, dim, dtype=dtype, mask=mask)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    """input (masked-out elements 0) divided by its masked ord-norm along dim, at least eps."""
    dtype = input.dtype if dtype is None else dtype
    filled = _fill("sum", input, mask)
    nrm = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    return filled / _tl.maximum(nrm, nrm.new_full([], eps))


