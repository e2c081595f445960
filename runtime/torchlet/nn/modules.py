"""torch.nn's Module machinery and the layers the seed workloads use.

* `Parameter`: a Tensor subclass (leaf, `requires_grad=True` by default,
  sharing storage with the data it wraps); ops on Parameters return plain
  Tensors, as in PyTorch.
* `Module`: parameters, buffers and submodules registered by assignment in
  PyTorch's `_parameters` / `_buffers` / `_modules` dicts; `parameters()`,
  `named_parameters()`, `buffers()`, `children()`, `modules()`,
  `named_modules()`, `state_dict()`, `to(device or dtype)`, `cpu()`, `cuda()`,
  `float()`, `double()`, `half()`, `bfloat16()`, `apply()`, `train()` /
  `eval()`, `zero_grad()`, `requires_grad_()` and PyTorch's `repr`.
* `Sequential`, `Linear`, `LayerNorm`, `RMSNorm`, `Embedding`, `SiLU`: every
  layer takes PyTorch's factory keywords `device=None, dtype=None`, builds its
  parameters with `torchlet.empty` and initialises them in place
  (torchlet.nn.init), so under `with torchlet.device("meta"):` they are meta
  tensors and initialisation only checks metadata.
"""
from __future__ import annotations

import itertools
import math
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

import torchlet

from ..utils.hooks import RemovableHandle
from . import functional as F
from . import init

_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
               "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def _typename(obj) -> str:
    """torch.typename: 'torchlet.FloatTensor' for tensors, the class name otherwise."""
    if isinstance(obj, torchlet.Tensor):
        return f"torchlet.{_TYPE_NAMES.get(str(obj.dtype).split('.')[-1], '')}Tensor"
    return type(obj).__name__ if type(obj).__module__ == "builtins" else f"{type(obj).__module__}.{type(obj).__name__}"


class _ParameterMeta(type):
    def __instancecheck__(cls, obj):
        # a parameter made over a tensor subclass (a FakeTensor) stays that subclass,
        # marked `_is_param`, as in PyTorch
        return super().__instancecheck__(obj) or (
            cls is Parameter and isinstance(obj, torchlet.Tensor) and getattr(obj, "_is_param", False))


class Parameter(torchlet.Tensor, metaclass=_ParameterMeta):
    """A Tensor that a Module registers as a parameter: `Parameter(data, requires_grad=True)`
    shares `data`'s storage, has no history, and requires grad by default."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = torchlet.empty(0)
        if not isinstance(data, torchlet.Tensor):
            raise TypeError(f"Parameter(): argument 'data' must be Tensor, not {type(data).__name__}")
        t = data.detach()
        if type(data) is not torchlet.Tensor and getattr(type(data), "__torch_dispatch__", None) is not None:
            t.requires_grad_(requires_grad)     # a subclass tensor keeps its class (PyTorch's custom-tensor path)
            t._is_param = True
            return t
        self = torchlet.Tensor.__new__(cls)
        _adopt(self, t)
        self.requires_grad_(requires_grad)
        return self

    def __init__(self, data=None, requires_grad=True):  # the Tensor(data) constructor does not apply
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __reduce_ex__(self, proto):
        return (Parameter, (self.detach(), self.requires_grad))

    def __deepcopy__(self, memo):
        r = memo.get(id(self))
        if r is None:
            r = memo[id(self)] = Parameter(self.detach().clone(), self.requires_grad)
        return r


def _adopt(obj, t) -> None:
    """Make the Python object `obj` own (a new reference to) `t`'s C tensor."""
    torchlet._lib.tl_tensor_retain(t._p)
    old = getattr(obj, "_p", None)
    obj._p = t._p
    if old is not None:
        torchlet._lib.tl_tensor_release(old)


def _addindent(s: str, n: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join(" " * n + line for line in lines[1:])


class Module:
    """Base class of all layers: assign Parameters, buffers and Modules as attributes."""

    training: bool

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given" if args else
                            f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_modules"] = {}
        d["_forward_hooks"] = OrderedDict()
        d["_forward_hooks_with_kwargs"] = OrderedDict()   # (OrderedDicts: RemovableHandle weakrefs them)
        d["_forward_hooks_always_called"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_pre_hooks_with_kwargs"] = OrderedDict()

    # --------------------------------------------------------- registration
    def __setattr__(self, name, value):
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            d.get("_modules", {}).pop(name, None)
            d.get("_buffers", {}).pop(name, None)
            params[name] = value
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            params[name] = None
        elif isinstance(value, Module):
            if "_modules" not in d:
                raise AttributeError("cannot assign module before Module.__init__() call")
            params is not None and params.pop(name, None)
            d["_buffers"].pop(name, None)
            d["_modules"][name] = value
        elif "_modules" in d and name in d["_modules"]:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            d["_modules"][name] = None
        elif "_buffers" in d and name in d["_buffers"]:
            if value is not None and not isinstance(value, torchlet.Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                "(torch.Tensor or None expected)")
            d["_buffers"][name] = value
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        for k in ("_parameters", "_buffers", "_modules"):
            self.__dict__.get(k, {}).pop(name, None)
        object.__delattr__(self, name)

    def __getattr__(self, name):  # only reached when normal lookup failed
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def register_parameter(self, name: str, param) -> None:
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        self._parameters[name] = param
        object.__setattr__(self, name, param)

    def register_buffer(self, name: str, tensor, persistent: bool = True) -> None:
        if tensor is not None and not isinstance(tensor, torchlet.Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = tensor
        if not persistent:
            self.__dict__.setdefault("_non_persistent_buffers_set", set()).add(name)
        object.__setattr__(self, name, tensor)

    def add_module(self, name: str, module) -> None:
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if "." in name or name == "":
            raise KeyError(f'module name can\'t contain ".", got: {name}' if name else 'module name can\'t be empty string ""')
        self._modules[name] = module
        object.__setattr__(self, name, module)

    register_module = add_module

    # -------------------------------------------------------------- calling
    def __call__(self, *args, **kwargs):
        d = self.__dict__
        if d.get("_forward_pre_hooks") or d.get("_forward_hooks"):
            return self._call_with_hooks(args, kwargs)
        return self.forward(*args, **kwargs)

    def _call_with_hooks(self, args, kwargs):
        """forward between the pre hooks (which may replace the inputs) and the
        forward hooks (which may replace the output), as PyTorch's _call_impl."""
        d = self.__dict__
        called = set()
        try:
            for hid, hook in list(d["_forward_pre_hooks"].items()):
                if hid in d["_forward_pre_hooks_with_kwargs"]:
                    res = hook(self, args, kwargs)
                    if res is not None:
                        if not (isinstance(res, tuple) and len(res) == 2):
                            raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, "
                                               f"new_kwargs), but got {res}.")
                        args, kwargs = res
                else:
                    res = hook(self, args)
                    if res is not None:
                        args = res if isinstance(res, tuple) else (res,)
            result = self.forward(*args, **kwargs)
            for hid, hook in list(d["_forward_hooks"].items()):
                called.add(hid)
                if hid in d["_forward_hooks_with_kwargs"]:
                    res = hook(self, args, kwargs, result)
                else:
                    res = hook(self, args, result)
                if res is not None:
                    result = res
            return result
        except Exception:
            for hid, hook in list(d["_forward_hooks"].items()):  # always_call hooks still see the call
                if hid in d["_forward_hooks_always_called"] and hid not in called:
                    try:
                        if hid in d["_forward_hooks_with_kwargs"]:
                            hook(self, args, kwargs, None)
                        else:
                            hook(self, args, None)
                    except Exception:
                        pass
            raise

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """hook(module, args) -> None or new args (with_kwargs: hook(module, args,
        kwargs) -> None or (args, kwargs)), run before forward."""
        d = self.__dict__
        handle = RemovableHandle(d["_forward_pre_hooks"], extra_dict=d["_forward_pre_hooks_with_kwargs"])
        d["_forward_pre_hooks"][handle.id] = hook
        if with_kwargs:
            d["_forward_pre_hooks_with_kwargs"][handle.id] = True
        if prepend:
            d["_forward_pre_hooks"].move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """hook(module, args, output) -> None or a new output (with_kwargs:
        hook(module, args, kwargs, output)), run after forward; always_call
        runs it even when forward raised."""
        d = self.__dict__
        handle = RemovableHandle(d["_forward_hooks"], extra_dict=[d["_forward_hooks_with_kwargs"],
                                                                  d["_forward_hooks_always_called"]])
        d["_forward_hooks"][handle.id] = hook
        if with_kwargs:
            d["_forward_hooks_with_kwargs"][handle.id] = True
        if always_call:
            d["_forward_hooks_always_called"][handle.id] = True
        if prepend:
            d["_forward_hooks"].move_to_end(handle.id, last=False)
        return handle

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    # ------------------------------------------------------------ iteration
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if self in memo and remove_duplicate:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            yield from m.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        seen = set()
        for name, m in self._modules.items():
            if m is not None and m not in seen:
                seen.add(m)
                yield name, m

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named_members(self, attr, prefix, recurse, remove_duplicate=True):
        seen = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for mp, m in mods:
            for k, v in getattr(m, attr).items():
                if v is None or (remove_duplicate and id(v) in seen):
                    continue
                seen.add(id(v))
                yield mp + ("." if mp else "") + k, v

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def state_dict(self, *, destination=None, prefix="", keep_vars=False):
        """An OrderedDict of every parameter and persistent buffer, detached
        unless keep_vars (they share storage with the module's tensors)."""
        out = OrderedDict() if destination is None else destination
        for mp, m in self.named_modules(prefix=prefix.rstrip(".")):
            skip = m.__dict__.get("_non_persistent_buffers_set", ())
            for k, v in itertools.chain(m._parameters.items(),
                                        ((k, b) for k, b in m._buffers.items() if k not in skip)):
                if v is not None:
                    out[mp + ("." if mp else "") + k] = v if keep_vars else v.detach()
        return out

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy tensors into the matching parameters and buffers (in place, no
        grad; assign=True makes the loaded tensors the module's, keeping each
        Parameter's requires_grad). Returns _IncompatibleKeys(missing_keys,
        unexpected_keys); with strict, missing or unexpected keys raise, and a
        shape mismatch always does, all listed in one RuntimeError."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        owners = {}
        for mp, m in self.named_modules():
            skip = m.__dict__.get("_non_persistent_buffers_set", ())
            for table in ("_parameters", "_buffers"):
                for k, v in getattr(m, table).items():
                    if v is not None and not (table == "_buffers" and k in skip):
                        owners[mp + ("." if mp else "") + k] = (m, table, k, v)
        for key in state_dict:
            if key not in owners:
                unexpected.append(key)
        with torchlet.no_grad():
            for key, (m, table, k, v) in owners.items():
                if key not in state_dict:
                    missing.append(key)
                    continue
                src = state_dict[key]
                if not isinstance(src, torchlet.Tensor):
                    errors.append(f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like '
                                  f"object from checkpoint but received {type(src)}")
                    continue
                if tuple(src.shape) != tuple(v.shape):
                    errors.append(f"size mismatch for {key}: copying a param with shape {src.shape} from checkpoint, "
                                  f"the shape in current model is {v.shape}.")
                    continue
                if assign:
                    new = Parameter(src, requires_grad=v.requires_grad) if isinstance(v, Parameter) else src
                    setattr(m, k, new)
                else:
                    v.copy_(src)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ". ")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". ")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t" + "\n\t".join(errors))
        return _IncompatibleKeys(missing, unexpected)

    # ----------------------------------------------------------- conversion
    def _apply(self, fn):
        """Replace every parameter's and buffer's payload by fn(tensor); a
        Parameter keeps its identity (as PyTorch's `param.data = fn(param)`)
        and its requires_grad, and its grad is converted too."""
        for m in self.modules():
            for k, p in m._parameters.items():
                if p is None:
                    continue
                with torchlet.no_grad():
                    new = fn(p)
                    g = p.grad
                    new_g = fn(g) if g is not None else None
                if new is p:
                    continue
                rg = p.requires_grad
                _adopt(p, new.detach())
                p.requires_grad_(rg)
                if new_g is not None:
                    p.grad = new_g
            for k, b in m._buffers.items():
                if b is not None:
                    m._buffers[k] = nb = fn(b)
                    object.__setattr__(m, k, nb)
        return self

    def apply(self, fn):
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def to(self, *args, **kwargs):
        """to(device), to(dtype), to(device, dtype), to(tensor): floating-point
        parameters and buffers take the dtype, all take the device."""
        device, dtype = _parse_to(args, kwargs)
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired "
                            f"dtype={dtype}")

        def convert(t):
            return t.to(device=device, dtype=dtype if t.is_floating_point() else None)

        return self._apply(convert)

    def cpu(self):
        return self._apply(lambda t: t.to("cpu"))

    def cuda(self, device=None):
        return self._apply(lambda t: t.to("cuda" if device is None else torchlet.device("cuda", device)
                                          if isinstance(device, int) else device))

    def _cast(self, dtype):
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self):
        return self._cast(torchlet.float32)

    def double(self):
        return self._cast(torchlet.float64)

    def half(self):
        return self._cast(torchlet.float16)

    def bfloat16(self):
        return self._cast(torchlet.bfloat16)

    # ------------------------------------------------------------- training
    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    p.grad.zero_()

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.__dict__["training"] = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self):
        return self.train(False)

    # ----------------------------------------------------------------- repr
    def extra_repr(self) -> str:
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({k}): " + _addindent(repr(m), 2) for k, m in self._modules.items()]
        lines = extra_lines + child_lines
        s = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                s += extra_lines[0]
            else:
                s += "\n  " + "\n  ".join(lines) + "\n"
        return s + ")"


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What Module.load_state_dict returns."""

    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return f"_IncompatibleKeys(missing_keys={self.missing_keys}, unexpected_keys={self.unexpected_keys})"

    __str__ = __repr__


def _parse_to(args, kwargs):
    """Module.to's arguments: (device, dtype) of to(device=None, dtype=None, non_blocking=False),
    to(dtype), to(tensor)."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise TypeError(f"to() received an invalid combination of arguments - got unexpected keyword "
                        f"'{next(iter(kwargs))}'")
    for a in args:
        if isinstance(a, torchlet.dtype):
            dtype = a
        elif isinstance(a, torchlet.Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, (str, torchlet.device, int)):
            device = a
        elif a is not None and not isinstance(a, bool):
            raise TypeError(f"to() received an invalid combination of arguments - got ({_typename(a)})")
    return device, dtype


class Sequential(Module):
    """Modules called in order; `Sequential(m0, m1, ...)` names them "0", "1", ...;
    `Sequential(OrderedDict(name=module))` keeps the names."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for k, m in args[0].items():
                self.add_module(k, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def _index(self, idx: int) -> int:
        n = len(self)
        idx = idx.__index__()
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range")
        return idx % n

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[self._index(idx)]

    def __setitem__(self, idx, module):
        key = list(self._modules)[self._index(idx)]
        self.add_module(key, module)

    def __delitem__(self, idx):
        if isinstance(idx, slice):
            keys = list(self._modules)[idx]
        else:
            keys = [list(self._modules)[self._index(idx)]]
        for k in keys:
            delattr(self, k)
        # PyTorch renumbers to keep the keys 0..n-1
        items = list(self._modules.items())
        for k, _ in items:
            object.__delattr__(self, k)
        self._modules.clear()
        for i, (_, m) in enumerate(items):
            self.add_module(str(i), m)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, sequential):
        for m in sequential:
            self.append(m)
        return self

    def insert(self, index: int, module):
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        mods = list(self._modules.values())
        mods.insert(index, module)
        for k in list(self._modules):
            object.__delattr__(self, k)
        self._modules.clear()
        for i, m in enumerate(mods):
            self.add_module(str(i), m)
        return self

    def forward(self, input):
        for m in self._modules.values():
            input = m(input)
        return input


def _factory(device, dtype) -> dict:
    return {"device": device, "dtype": dtype}


class Linear(Module):
    """y = x W^T + b; W: [out_features, in_features], PyTorch's init
    (kaiming_uniform_ with a=sqrt(5): U(-1/sqrt(in), 1/sqrt(in)), the same bound for b)."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        fk = _factory(device, dtype)
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(torchlet.empty((out_features, in_features), **fk))
        if bias:
            self.bias = Parameter(torchlet.empty(out_features, **fk))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


def _shape(normalized_shape) -> tuple:
    return (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        fk = _factory(device, dtype)
        self.normalized_shape = _shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        self._bias = bias
        if elementwise_affine:
            self.weight = Parameter(torchlet.empty(self.normalized_shape, **fk))
            if bias:
                self.bias = Parameter(torchlet.empty(self.normalized_shape, **fk))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self._bias}")


class RMSNorm(Module):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(torchlet.empty(self.normalized_shape, **_factory(device, dtype)))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, input):
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class Embedding(Module):
    """A lookup table [num_embeddings, embedding_dim], N(0, 1) init, the padding row zero."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, dtype=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        if padding_idx is not None:
            if padding_idx > 0:
                if padding_idx >= num_embeddings:
                    raise AssertionError("Padding_idx must be within num_embeddings")
            elif padding_idx < 0:
                if padding_idx < -num_embeddings:
                    raise AssertionError("Padding_idx must be within num_embeddings")
                padding_idx = num_embeddings + padding_idx
        self.padding_idx = padding_idx
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            self.weight = Parameter(torchlet.empty((num_embeddings, embedding_dim), **_factory(device, dtype)),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self):
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with torchlet.no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += ", scale_grad_by_freq=True"
        if self.sparse is not False:
            s += ", sparse=True"
        return s


class SiLU(Module):
    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""
