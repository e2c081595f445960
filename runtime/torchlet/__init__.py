"""torchlet: a small PyTorch-like tensor library built by a torchgen-style toolchain.

This module is importable without the generated operator bindings; later
layers (dispatcher, generated ops, autograd) attach themselves when present.
"""
from __future__ import annotations

from . import _blas  # noqa: F401  (loads the vendor BLAS that _C links; first)
from . import _clib  # noqa: F401  (_C.lib: the runtime and the operator shards; before any use)
from ._C import ffi as _ffi, lib as _lib
from ._device import device
from ._dtype import (
    bfloat16,
    bool_ as bool,  # noqa: A001  (torch.bool)
    can_cast,
    complex64,
    complex128,
    dtype,
    float16,
    float32,
    float64,
    get_default_dtype,
    get_default_complex_dtype,
    int8,
    int16,
    int32,
    int64,
    promote_types,
    set_default_dtype,
    uint8,
)
from ._errors import check as _check
from ._factory import as_tensor, tensor
from ._generator import (
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)
from ._tensor import Size, Tensor, from_numpy

# PyTorch's aliases
half = float16
float = float32  # noqa: A001
double = float64
cfloat = complex64
cdouble = complex128
short = int16
int = int32  # noqa: A001
long = int64

__version__ = "0.1.0"


def is_tensor(obj, /) -> "builtins.bool":
    return isinstance(obj, Tensor)


def is_floating_point(input: Tensor):
    return input.is_floating_point()


def is_complex(input: Tensor):
    return input.is_complex()


def is_conj(input: Tensor):
    return input.is_conj()


def numel(input: Tensor):
    return input.numel()


def result_type(tensor1, tensor2):
    """torch.result_type: the dtype an arithmetic op on these operands returns."""
    from ._rt import result_type as _rt_result_type
    return _rt_result_type(tensor1, tensor2)


def set_num_threads(n, /) -> None:
    """Threads used by kernels above the grain size and by BLAS (torchlet's thread pool)."""
    _check(_lib.tl_set_num_threads(n))


def get_num_threads():
    return _lib.tl_get_num_threads()


def get_cpu_capability() -> str:
    """The kernel instruction-set level in use: 'default', 'avx2' or 'avx512'."""
    return _ffi.string(_lib.tl_cpu_capability_name(_lib.tl_cpu_capability())).decode()


def _set_cpu_capability(name: str) -> None:
    """Switch every kernel table to a (supported) lower level; for tests."""
    _check(_lib.tl_set_cpu_capability(name.encode()))


def _supported_cpu_capabilities():
    return [_ffi.string(_lib.tl_cpu_capability_name(i)).decode() for i in range(_lib.tl_cpu_capability_max() + 1)]


import builtins  # noqa: E402  (for the annotation above; keep names from shadowing)

# ------------------------------------------------------------------ operators
# Every operator goes through the dispatcher: define the operators and
# register their kernels once (generated C), then expose the generated Python
# bindings (module functions here; methods and dunders on Tensor).
from ._tensor import _gen_ops  # noqa: E402

if hasattr(_lib, "tl_ops_register_all"):
    _check(_lib.tl_ops_register_all())
if hasattr(_lib, "tl_autograd_register_all"):  # generated autograd kernels (docs/AUTOGRAD.md)
    _check(_lib.tl_autograd_register_all())
if hasattr(_lib, "tl_autocast_register_all"):  # yaml/autocast.yaml's kernels at AutocastCPU/CUDA
    _check(_lib.tl_autocast_register_all())
if _gen_ops is not None:
    from ._generated._ops import *  # noqa: E402,F401,F403
    from . import _indexing  # noqa: E402

    _indexing.install()  # x[i, ::2, None, ...] = v through select/slice/unsqueeze/copy_
    from ._generated import _nn as _gen_nn  # noqa: E402  (python_module: nn operators)

    _C._nn = _gen_nn  # torch._C._nn's counterpart; torchlet.nn.functional builds on it
    from ._generated import _linalg as _gen_linalg  # noqa: E402  (python_module: linalg operators)

    _C._linalg = _gen_linalg  # torch._C._linalg's counterpart; torchlet.linalg builds on it
    from ._generated import _special as _gen_special  # noqa: E402  (python_module: special operators)

    _C._special = _gen_special  # torch._C._special's counterpart; torchlet.special builds on it

    from . import _reductions  # noqa: E402  (torchlet.norm / Tensor.norm over linalg_vector_norm)
    from ._reductions import norm  # noqa: E402,F401

    _reductions.install(Tensor)
    from . import _missing_ops  # noqa: E402  (nonzero(as_tuple=True), as torch's hand-written binding)

    _missing_ops.install(Tensor, globals())
    from . import _tensor_api  # noqa: E402  (float() ... type(), new_tensor, broadcast_shapes, meshgrid(*tensors))

    _tensor_api.install(Tensor, globals())
    from . import _select_api  # noqa: E402  (unique_consecutive's outputs, block_diag(*tensors), as torch/functional.py)

    _select_api.install(Tensor, globals())
    from . import _products  # noqa: E402  (einsum(*operands) and its sublist format, tensordot(dims=int | lists))

    _products.install(globals())
    from . import _linalg_decomp  # noqa: E402  (torchlet.lu / Tensor.lu over _lu_with_info, as torch/functional.py)

    _linalg_decomp.install(Tensor, globals())
    from . import linalg, return_types, special  # noqa: E402,F401  (torchlet.linalg.vector_norm, torchlet.return_types.max, torchlet.special.i1)
    from . import fft  # noqa: E402,F401  (torchlet.fft over _fft_r2c / _fft_c2r / _fft_c2c)
    from . import masked  # noqa: E402,F401  (torchlet.masked.sum ...: reductions over an explicit mask)
    from . import signal  # noqa: E402,F401  (torchlet.signal.windows)
    from ._functional import unravel_index  # noqa: E402,F401  (torch/functional.py's Python functions)

from . import _dispatch  # noqa: E402,F401  (torchlet._C._dispatch_keys, ...)
from ._ops import ops  # noqa: E402  (torchlet.ops.aten.add.Tensor: the operator table's rows)
from ._tags import Tag  # noqa: E402

# ------------------------------------------------------------------ autograd
# (runtime/torchlet/autograd: backward/grad over the C engine, grad modes,
# gradcheck; Tensor.requires_grad / grad / grad_fn / backward ...)
from . import autograd  # noqa: E402
from .autograd import (  # noqa: E402,F401
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from . import library  # noqa: E402,F401  (after autograd: custom operators build on Function)
from . import _python_dispatch  # noqa: E402,F401  (the Python key's fallback: dispatch modes, subclasses)
from . import utils  # noqa: E402,F401  (torchlet.utils._python_dispatch.TorchDispatchMode)
from . import testing  # noqa: E402,F401  (torchlet.testing.assert_close / make_tensor)

autograd._install(Tensor)

from . import overrides  # noqa: E402,F401  (TorchFunctionMode; torchlet._C._len_torch_function_stack ...)

if _gen_ops is not None:
    from . import nn  # noqa: E402,F401  (torchlet.nn.functional, Module, Linear, ...)
    from . import optim  # noqa: E402,F401  (torchlet.optim: SGD, Adam, ..., lr_scheduler)
    from .serialization import load, save  # noqa: E402,F401  (PyTorch's zip checkpoint format)
from .utils._device import get_default_device, set_default_device  # noqa: E402,F401  (after every factory)

# ------------------------------------------------------------------ autocast
# (runtime/torchlet/amp: torchlet.autocast and its thread-local state; the
# policies are yaml/autocast.yaml, the kernel runtime/src/autocast.c)
from . import amp  # noqa: E402
from . import backends  # noqa: E402,F401  (torchlet.backends.cpu.info(): the machine and the store policy)
from . import cuda  # noqa: E402,F401  (torchlet.cuda: loads the driver lazily, installs the kernel compiler)
from . import compiler  # noqa: E402,F401  (torchlet.compiler.explain / reset / set_stance)
from ._compile.api import compile  # noqa: E402,F401  (torchlet.compile)
from .amp.autocast_mode import (  # noqa: E402,F401
    autocast,
    autocast_decrement_nesting,
    autocast_increment_nesting,
    clear_autocast_cache,
    get_autocast_dtype,
    is_autocast_cache_enabled,
    is_autocast_enabled,
    set_autocast_cache_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
)
