"""torchlet.fft: PyTorch's torch.fft, composed over the three ATen FFT
operators (_fft_r2c, _fft_c2r, _fft_c2c: kernels/native/fft.c) exactly as
aten/src/ATen/native/SpectralOps.cpp composes them: the same dtype promotion,
n= / s= trimming and zero padding, norm= modes, dim checks and messages.
Autograd flows through the three operators' derivatives (yaml/derivatives.yaml)
and the slicing / padding / conj operators used here (docs/FFT.md)."""
from __future__ import annotations

import torchlet as _t

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2",
           "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

# PyTorch's fft_norm_mode
_NONE, _BY_ROOT_N, _BY_N = 0, 1, 2


def _norm_from_string(norm, forward):
    if norm is None or norm == "backward":
        return _NONE if forward else _BY_N
    if norm == "forward":
        return _BY_N if forward else _NONE
    if norm == "ortho":
        return _BY_ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _promote_type_fft(dtype, require_complex):
    if dtype.is_complex:
        return dtype
    if not dtype.is_floating_point:
        dtype = _t.get_default_dtype()
    if dtype not in (_t.float32, _t.float64):
        raise RuntimeError(f"Unsupported dtype {_scalar_name(dtype)}")
    return dtype.to_complex() if require_complex else dtype


def _scalar_name(dtype):
    from ._dtype import _SCALAR_NAMES
    return _SCALAR_NAMES[dtype._id]


def _promote_tensor_fft(t, require_complex=False):
    new = _promote_type_fft(t.dtype, require_complex)
    return t if new is t.dtype else t.to(new)


def _wrap_dim(dim, ndim):
    if ndim <= 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})")
    return dim % ndim


def _resize_fft_input(x, dims, sizes):
    """Trims (a slice) or zero-pads (constant_pad_nd) each dim to its size (-1: kept)."""
    must_copy = False
    pad = [0] * (2 * x.dim())
    for d, n in zip(dims, sizes):
        if n == -1:
            continue
        cur = x.shape[d]
        if cur < n:
            must_copy = True
            pad[len(pad) - 2 * d - 1] = n - cur
        if cur > n:
            x = x.narrow(d, 0, n)
    return _t.constant_pad_nd(x, pad) if must_copy else x


def _check_n(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


# out=: the checks of SpectralOps.cpp's fft_*_maybe_out, then the operator's
# out variant (resize_output + copy_, which casts; no autograd through out=)
def _maybe_out(op, name, out, *args):
    """op(*args), or op's out variant after the output-dtype check."""
    if out is None:
        return op(*args)
    if op is _t._fft_c2r:
        if not out.is_floating_point():
            raise RuntimeError(f"{name} expects a floating point output tensor, but got {_scalar_name(out.dtype)}")
    elif not out.is_complex():
        raise RuntimeError(f"{name} expects a complex output tensor, but got {_scalar_name(out.dtype)}")
    return op(*args, out=out)


def _r2c_maybe_out(name, out, x, dims, mode, onesided):
    return _maybe_out(_t._fft_r2c, name, out, x, dims, mode, onesided)


def _c2r_maybe_out(name, out, x, dims, mode, last_dim_size):
    return _maybe_out(_t._fft_c2r, name, out, x, dims, mode, last_dim_size)


def _c2c_maybe_out(name, out, x, dims, mode, forward):
    return _maybe_out(_t._fft_c2c, name, out, x, dims, mode, forward)


def _conj_maybe_out(ret, out):
    """ret.conj(), or out (which holds ret) conjugated in place."""
    if out is None:
        return ret.conj()
    return out.copy_(_t.conj_physical(out))


def _fft_r2c(name, x, n, dim, norm, forward, onesided, out=None):
    if x.is_complex():
        raise RuntimeError(f"{name} expects a real input tensor, but got {_scalar_name(x.dtype)}")
    x = _promote_tensor_fft(x)
    d = _wrap_dim(dim, x.dim())
    nn = x.shape[d] if n is None else n
    _check_n(nn)
    if n is not None:
        x = _resize_fft_input(x, [d], [nn])
    ret = _r2c_maybe_out(name, out, x, [d], _norm_from_string(norm, forward), onesided)
    return ret if forward else _conj_maybe_out(ret, out)


def _fft_c2r(name, x, n, dim, norm, forward, out=None):
    x = _promote_tensor_fft(x, require_complex=True)
    d = _wrap_dim(dim, x.dim())
    nn = 2 * (x.shape[d] - 1) if n is None else n
    _check_n(nn)
    if n is not None:
        x = _resize_fft_input(x, [d], [nn // 2 + 1])
    if forward:
        x = x.conj()
    return _c2r_maybe_out(name, out, x, [d], _norm_from_string(norm, forward), nn)


def _fft_c2c(name, x, n, dim, norm, forward, out=None):
    if not x.is_complex():
        raise RuntimeError(f"{name} expects a complex input tensor, but got {_scalar_name(x.dtype)}")
    d = _wrap_dim(dim, x.dim())
    nn = x.shape[d] if n is None else n
    _check_n(nn)
    if n is not None:
        x = _resize_fft_input(x, [d], [nn])
    return _c2c_maybe_out(name, out, x, [d], _norm_from_string(norm, forward), forward)


def fft(input, n=None, dim=-1, norm=None, *, out=None):
    if input.is_complex():
        return _fft_c2c("fft", input, n, dim, norm, True, out)
    return _fft_r2c("fft", input, n, dim, norm, True, False, out)


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    if input.is_complex():
        return _fft_c2c("ifft", input, n, dim, norm, False, out)
    return _fft_r2c("ifft", input, n, dim, norm, False, False, out)


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    return _fft_r2c("rfft", input, n, dim, norm, True, True, out)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    return _fft_c2r("irfft", input, n, dim, norm, False, out)


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    return _fft_c2r("hfft", input, n, dim, norm, True, out)


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    return _fft_r2c("ihfft", input, n, dim, norm, False, True, out)


# ------------------------------------------------------------------ n-d

def _canonicalize(x, s, dim):
    """PyTorch's canonicalize_fft_shape_and_dim_args: (shape, dims)."""
    ndim = x.dim()
    dims = None
    if dim is not None:
        dim = [dim] if isinstance(dim, int) else list(dim)
        dims = [_wrap_dim(d, ndim) for d in dim]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = [s] if isinstance(s, int) else list(s)
        if dims is not None and len(dims) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {ndim} dimensions.")
        if dims is None:
            dims = list(range(ndim - len(s), ndim))
        shape = [x.shape[d] if n == -1 else n for d, n in zip(dims, s)]
    elif dims is None:
        dims = list(range(ndim))
        shape = list(x.shape)
    else:
        shape = [x.shape[d] for d in dims]
    for n in shape:
        _check_n(n)
    return shape, dims


def _fftn_c2c(name, x, s, dim, norm, forward, out=None):
    shape, dims = _canonicalize(x, s, dim)
    x = _promote_tensor_fft(x, require_complex=True)
    x = _resize_fft_input(x, dims, shape)
    return _c2c_maybe_out(name, out, x, dims, _norm_from_string(norm, forward), forward)


def fftn(input, s=None, dim=None, norm=None, *, out=None):
    return _fftn_c2c("fftn", input, s, dim, norm, True, out)


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    return _fftn_c2c("ifftn", input, s, dim, norm, False, out)


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    return _rfftn("rfftn", input, s, dim, norm, out)


def _rfftn(name, input, s, dim, norm, out=None):
    if input.is_complex():
        raise RuntimeError(f"{name} expects a real-valued input tensor, but got {_scalar_name(input.dtype)}")
    shape, dims = _canonicalize(input, s, dim)
    if not shape:
        raise RuntimeError(f"{name} must transform at least one axis")
    x = _resize_fft_input(_promote_tensor_fft(input), dims, shape)
    return _r2c_maybe_out(name, out, x, dims, _norm_from_string(norm, True), True)


def _c2r_shape(name, input, s, dim):
    """canonicalize_fft_c2r_shape_and_dim_args: (shape with the last entry the
    half-spectrum length, dims, the output's last-dim length)."""
    shape, dims = _canonicalize(input, s, dim)
    if not shape:
        raise RuntimeError(f"{name} must transform at least one axis")
    s_list = None if s is None else ([s] if isinstance(s, int) else list(s))
    if s_list is None or s_list[-1] == -1:
        last = 2 * (input.shape[dims[-1]] - 1)
    else:
        last = shape[-1]
    _check_n(last)
    shape[-1] = last // 2 + 1
    return shape, dims, last


def _irfftn(name, input, s, dim, norm, out=None):
    shape, dims, last = _c2r_shape(name, input, s, dim)
    x = _resize_fft_input(_promote_tensor_fft(input, require_complex=True), dims, shape)
    return _c2r_maybe_out(name, out, x, dims, _norm_from_string(norm, False), last)


def _hfftn(name, input, s, dim, norm, out=None):
    """c2c over the leading dims, then the conjugated c2r of the last (SpectralOps.cpp)."""
    shape, dims, last = _c2r_shape(name, input, s, dim)
    x = _resize_fft_input(_promote_tensor_fft(input, require_complex=True), dims, shape)
    mode = _norm_from_string(norm, True)
    tmp = _t._fft_c2c(x, dims[:-1], mode, True) if len(dims) > 1 else x
    return _c2r_maybe_out(name, out, tmp.conj(), dims[-1:], mode, last)


def _ihfftn(name, input, s, dim, norm, out=None):
    """the conjugated onesided r2c of the last dim, then the inverse c2c over the others."""
    shape, dims = _canonicalize(input, s, dim)
    if not shape:
        raise RuntimeError(f"{name} must transform at least one axis")
    x = _resize_fft_input(_promote_tensor_fft(input), dims, shape)
    mode = _norm_from_string(norm, False)
    if len(dims) == 1:
        return _conj_maybe_out(_r2c_maybe_out(name, out, x, dims, mode, True), out)
    tmp = _t._fft_r2c(x, dims[-1:], mode, True)
    return _c2c_maybe_out(name, out, _t.conj_physical(tmp), dims[:-1], mode, False)


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    return _hfftn("hfftn", input, s, dim, norm, out)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    return _ihfftn("ihfftn", input, s, dim, norm, out)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _hfftn("hfftn", input, s, dim, norm, out)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _ihfftn("ihfftn", input, s, dim, norm, out)


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    return _irfftn("irfftn", input, s, dim, norm, out)


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _fftn_c2c("fftn", input, s, dim, norm, True, out)


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _fftn_c2c("ifftn", input, s, dim, norm, False, out)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _rfftn("rfftn", input, s, dim, norm, out)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _irfftn("irfftn", input, s, dim, norm, out)


# ------------------------------------------------------------------ helpers

def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """[0, 1, ..., (n-1)//2, -(n//2), ..., -1] / (d * n), PyTorch's fftfreq."""
    if out is not None:
        result = _t.arange(n, out=out)
    else:
        dtype = _t.get_default_dtype() if dtype is None else dtype
        result = _t.arange(n, dtype=dtype, device=device)
    right = result[(n + 1) // 2:]
    right.copy_(_t.arange(-(n // 2), 0, dtype=result.dtype, device=result.device))
    result = result.mul_(1.0 / (n * d))
    if requires_grad:
        result.requires_grad_(True)
    return result


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """[0, 1, ..., n//2] / (d * n), PyTorch's rfftfreq."""
    if out is not None:
        result = _t.arange(n // 2 + 1, out=out)
    else:
        dtype = _t.get_default_dtype() if dtype is None else dtype
        result = _t.arange(n // 2 + 1, dtype=dtype, device=device)
    result = result.mul_(1.0 / (n * d))
    if requires_grad:
        result.requires_grad_(True)
    return result


def _shift_dims(input, dim):
    if dim is None:
        return list(range(input.dim()))
    return [dim] if isinstance(dim, int) else list(dim)


def fftshift(input, dim=None):
    dims = _shift_dims(input, dim)
    return _t.roll(input, [input.shape[d] // 2 for d in dims], dims)


def ifftshift(input, dim=None):
    dims = _shift_dims(input, dim)
    return _t.roll(input, [(input.shape[d] + 1) // 2 for d in dims], dims)
