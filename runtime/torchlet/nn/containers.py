"""torch.nn's containers: ModuleList, ModuleDict, ParameterList, ParameterDict.
Entries are registered under their index / key (so parameters(),
state_dict() and to() see them) and keep PyTorch's names and repr."""
from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable, Mapping

import torchlet

from .modules import Module, Parameter, _addindent


def _index(n: int, idx) -> int:
    idx = operator.index(idx)
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of range")
    return idx % n


class ModuleList(Module):
    """Holds submodules in a list, registered as "0", "1", ..."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self += modules

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(list(self._modules.values())[idx])
        return self._modules[str(_index(len(self), idx))]

    def __setitem__(self, idx, module):
        self.add_module(str(_index(len(self), idx)), module)

    def __delitem__(self, idx):
        keys = list(self._modules)
        for k in (keys[idx] if isinstance(idx, slice) else [keys[_index(len(self), idx)]]):
            delattr(self, k)
        mods = list(self._modules.values())
        for k in list(self._modules):   # keep the keys 0..n-1, as PyTorch
            object.__delattr__(self, k)
        self._modules.clear()
        for i, m in enumerate(mods):
            self.add_module(str(i), m)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        out = ModuleList()
        for m in self:
            out.append(m)
        for m in other:
            out.append(m)
        return out

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def insert(self, index: int, module) -> None:
        mods = list(self._modules.values())
        mods.insert(index, module)
        for k in list(self._modules):
            object.__delattr__(self, k)
        self._modules.clear()
        for i, m in enumerate(mods):
            self.add_module(str(i), m)

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key=-1):
        v = self[key]
        del self[key]
        return v

    def extend(self, modules):
        if not isinstance(modules, Iterable):
            raise TypeError("ModuleList.extend should be called with an iterable, but got " + type(modules).__name__)
        for m in modules:
            self.append(m)
        return self

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')


class ModuleDict(Module):
    """Holds submodules in an ordered dict keyed by name."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]
        object.__delattr__(self, key)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        for k in list(self._modules):
            del self[k]

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules):
        if not isinstance(modules, Iterable):
            raise TypeError("ModuleDict.update should be called with an iterable of key/value pairs, but got "
                            + type(modules).__name__)
        if isinstance(modules, (OrderedDict, ModuleDict, Mapping)):
            for k, m in modules.items():
                self[k] = m
            return
        for j, m in enumerate(modules):
            if not isinstance(m, Iterable):
                raise TypeError(f"ModuleDict update sequence element #{j} should be Iterable; is "
                                + type(m).__name__)
            if not len(m) == 2:
                raise ValueError(f"ModuleDict update sequence element #{j} has length {len(m)}; 2 is required")
            self[m[0]] = m[1]

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')


def _as_parameter(value):
    """A tensor stored in a Parameter container becomes a Parameter (as PyTorch)."""
    if isinstance(value, torchlet.Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


def _param_line(k, p, typename: bool) -> str:
    """PyTorch's entry line: ParameterList names the dtype, ParameterDict the tensor type."""
    if isinstance(p, torchlet.Tensor):
        from .modules import _typename
        kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
        size = "x".join(str(s) for s in p.shape)
        dev = "" if p.device.type == "cpu" else f" ({p.device})"
        return f"({k}): {kind} containing: [{_typename(p) if typename else p.dtype} of size {size}{dev}]"
    return f"({k}): Object of type: {type(p).__name__}"


class ParameterList(Module):
    """Holds parameters in a list (tensors are wrapped as Parameters), registered as "0", "1", ..."""

    def __init__(self, values=None):
        super().__init__()
        self.__dict__["_size"] = 0
        if values is not None:
            self += values

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            out = self.__class__()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return getattr(self, str(_index(len(self), idx)))

    def __setitem__(self, idx, param):
        idx = _index(len(self), idx)
        param = _as_parameter(param)
        if isinstance(param, torchlet.Tensor):
            self.register_parameter(str(idx), param)
        else:
            self._parameters.pop(str(idx), None)
            object.__setattr__(self, str(idx), param)

    def __len__(self):
        return self._size

    def __iter__(self):
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters):
        return self.extend(parameters)

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def append(self, value):
        n = self._size
        self.__dict__["_size"] = n + 1
        self[n] = value
        return self

    def extend(self, values):
        if not isinstance(values, Iterable) or isinstance(values, torchlet.Tensor):
            raise TypeError("ParameterList.extend should be called with an iterable, but got "
                            + type(values).__name__)
        for v in values:
            self.append(v)
        return self

    def extra_repr(self) -> str:
        return "\n".join(_param_line(i, p, False) for i, p in enumerate(self))

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """Holds parameters in an ordered dict keyed by name (tensors are wrapped as Parameters)."""

    def __init__(self, parameters=None):
        super().__init__()
        self.__dict__["_keys"] = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key):
        return getattr(self, key)

    def __setitem__(self, key, value):
        if not isinstance(key, str):
            raise TypeError(f"parameter name should be a string. Got {type(key).__name__}")
        self._keys[key] = None
        value = _as_parameter(value)
        if isinstance(value, torchlet.Tensor):
            self.register_parameter(key, value)
        else:
            self._parameters.pop(key, None)
            object.__setattr__(self, key, value)

    def __delitem__(self, key):
        del self._keys[key]
        self._parameters.pop(key, None)
        object.__delattr__(self, key)

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __contains__(self, key):
        return key in self._keys

    def keys(self):
        return self._keys.keys()

    def values(self):
        return (self[k] for k in self._keys)

    def items(self):
        return ((k, self[k]) for k in self._keys)

    def get(self, key, default=None):
        return self[key] if key in self else default

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def clear(self):
        for k in list(self._keys):
            del self[k]

    def update(self, parameters):
        if not isinstance(parameters, Iterable):
            raise TypeError("ParametersDict.update should be called with an iterable of key/value pairs, but got "
                            + type(parameters).__name__)
        if isinstance(parameters, (Mapping, ParameterDict)):
            for k, v in parameters.items():
                self[k] = v
            return
        for j, p in enumerate(parameters):
            if not isinstance(p, Iterable):
                raise TypeError(f"ParameterDict update sequence element #{j} should be Iterable; is "
                                + type(p).__name__)
            if not len(p) == 2:
                raise ValueError(f"ParameterDict update sequence element #{j} has length {len(p)}; 2 is required")
            self[p[0]] = p[1]

    def extra_repr(self) -> str:
        return "\n".join(_param_line(k, p, True) for k, p in self.items())

    def __call__(self, input):
        raise RuntimeError("ParameterDict should not be called.")


del _addindent
