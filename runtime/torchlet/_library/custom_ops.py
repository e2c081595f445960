"""``custom_op``: a Python function as an operator of the dispatcher.

    @torchlet.library.custom_op("demo::rms_norm", mutates_args=())
    def rms_norm(x: Tensor, w: Tensor, eps: float) -> Tensor: ...

One ``define`` and these kernels, all Python, in a FRAGMENT library:

| key | kernel |
|---|---|
| CompositeExplicitAutograd, or each device of ``device_types`` | the function (``register_kernel`` overrides per device; ``set_kernel_enabled`` switches back) |
| Meta | the fake kernel (``register_fake``), or PyTorch's "no fake impl" error |
| Autograd | the user's backward as a node of the C engine (``register_autograd``), or a node whose backward says no formula was registered; skipped entirely when no input requires grad |
| ADInplaceOrView | mutating operators only: bumps the version of every mutated argument |
| BackendSelect | operators without Tensor inputs: routes by the ``device`` argument |

Functional operators must not return an input or a view of one: checked
at each call of the real kernel.
"""
from __future__ import annotations

import contextlib
import inspect

from .. import _ops
from .. import _schema as _sch
from .._C import lib
from .._dispatch import DispatchKeySet, _key
from .._tensor import Tensor
from . import fake_impl
from .infer_schema import infer_schema

_defs: dict[str, "CustomOpDef"] = {}   # qualname -> its live definition

_DEVICE_KEY = {"cpu": "CPU", "cuda": "CUDA", "meta": "Meta"}


def _storage_of(t: Tensor):
    return lib.tl_tensor_storage(t._p)


def custom_def_of(qualname: str) -> "CustomOpDef | None":
    """The live custom operator of a qualified name ("ns::op"), if it is one."""
    return _defs.get(qualname)


def _tensors(xs):
    """The tensors among xs, and inside their list / tuple items."""
    for x in xs:
        if isinstance(x, Tensor):
            yield x
        elif isinstance(x, (list, tuple)):
            yield from (y for y in x if isinstance(y, Tensor))


class CustomOpDef:
    """One custom operator: call it like the function it wraps."""

    def __init__(self, namespace: str, name: str, schema: str, fn, device_types, tags):
        self._namespace = namespace
        self._name = name
        self._qualname = f"{namespace}::{name}"
        self._init_fn = fn
        self._backend_fns: dict[str | None, object] = {}
        self._disabled: set[str | None] = set()
        self._abstract_fn = None
        self._backward_fn = None
        self._setup_context_fn = None
        self._device_types = device_types
        self._ov = None
        from ..library import Library
        self._lib = Library(namespace, "FRAGMENT")
        try:          # all or nothing: a failure leaves no half-registered operator
            self._lib.define(f"{name}{schema}", tags=tags)
            self._schema = _sch.parse(f"{self._qualname}{schema}")
            self._arg_names = [a.name for a in self._schema.arguments]
            self._mutated = [a.name for a in self._schema.arguments
                             if a.alias_info is not None and a.alias_info.is_write]
            self._register_to_dispatcher()
        except BaseException:
            self._lib._destroy()
            raise
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__name__ = name
        self.__module__ = getattr(fn, "__module__", __name__)

    def __repr__(self):
        return f"<CustomOpDef({self._qualname})>"

    @property
    def _opoverload(self) -> "_ops.OpOverload":
        ov = self._ov
        if ov is None:
            ov = self._ov = _ops.lookup(self._qualname)
        return ov

    def __call__(self, /, *args, **kwargs):
        ov = self._ov
        return (ov if ov is not None else self._opoverload)(*args, **kwargs)

    # -- what the dispatcher runs
    def _backend_kernel(self, device):
        opdef = self
        functional = not self._mutated

        def kernel(*args, **kwargs):
            fn = opdef._backend_fns.get(device)
            if fn is None or device in opdef._disabled:
                fn = opdef._init_fn
            out = fn(*args, **kwargs)
            if functional:
                opdef._check_no_alias(args, kwargs, out, fn)
            return out

        kernel.__name__ = getattr(self._init_fn, "__name__", self._name)
        return kernel

    def _check_no_alias(self, args, kwargs, out, fn):
        if out.__class__ is Tensor and not kwargs:     # the common case, without building sets
            s = _storage_of(out)
            for a in args:
                if a.__class__ is Tensor and _storage_of(a) == s:
                    break
                if a.__class__ in (list, tuple):
                    break       # lists: the general check below
            else:
                return
        outs = list(_tensors(out if isinstance(out, (list, tuple)) else (out,)))
        if not outs:
            return
        # storage objects (cdata pointers compare and hash by address): a fresh
        # output, empty or not, never shares one with an input
        ins = {_storage_of(t) for t in _tensors(args)}
        if kwargs:
            ins.update(_storage_of(t) for t in _tensors(kwargs.values()))
        seen = set()
        for o in outs:
            s = _storage_of(o)
            if s in ins or s in seen:
                module = getattr(fn, "__module__", "?")
                raise RuntimeError(
                    f"{self._qualname} (with implementation in {module}): The output of this custom operator (1) "
                    f"must not also be an input to this custom operator and (2) may not alias any inputs to this "
                    f"custom operator or other returns. The most common way to trigger this error is if we have "
                    f"y = custom_op(x) and y and x are the same Tensor. Please instead return a clone of the "
                    f"offending output tensor(s) (e.g. return x.clone()) or refactor the custom operator to not "
                    f"return y.")
            seen.add(s)

    def _meta_kernel(self, *args, **kwargs):
        if self._abstract_fn is None:
            if not self._schema.returns:
                return None           # a mutating op returning nothing: its "trivial fake"
            raise RuntimeError(
                f"There was no fake impl registered for {self!r}. This is necessary for torch.compile/export/fx "
                f"tracing to work. Please use `{self._init_fn.__name__}.register_fake` to add an fake impl.")
        return fake_impl.run_fake(self._opoverload, self._abstract_fn, args, kwargs)

    def _register_to_dispatcher(self):
        lb = self._lib
        if self._device_types is None:
            lb.impl(self._name, self._backend_kernel(None), "CompositeExplicitAutograd")
        else:
            for d in self._device_types:
                lb.impl(self._name, self._backend_kernel(d), _DEVICE_KEY.get(d, d))
        lb.impl(self._name, self._meta_kernel, "Meta")
        from .autograd import make_autograd_kernel
        lb.impl(self._name, make_autograd_kernel(self), "Autograd", with_keyset=True, _gated=True)
        if self._mutated:
            lb.impl(self._name, self._inplace_view_kernel, "ADInplaceOrView", with_keyset=True)
        if not any(a.is_tensor_like for a in self._schema.arguments):
            lb.impl(self._name, self._backend_select_kernel, "BackendSelect", with_keyset=True)

    def _inplace_view_kernel(self, keyset, *args, **kwargs):
        below = DispatchKeySet(lib.tl_keyset_below(int(keyset), _key("ADInplaceOrView")))
        # the kernel's own operators run below this layer too (PyTorch's
        # AutoDispatchBelowADInplaceOrView): one version bump per call, this one
        bound = self._bound(args, kwargs)
        prev = lib.tl_exclude_guard_enter(lib.tl_keyset_autograd() | (1 << _key("ADInplaceOrView")))
        try:
            out = self._opoverload.redispatch(below, *args, **kwargs)
        finally:
            lib.tl_exclude_guard_exit(prev)
        for name in self._mutated:   # as PyTorch: once per call, beside the body's own bumps
            for t in _tensors((bound.get(name),)):
                lib.tl_tensor_bump_version(t._p)
        return out

    def _backend_select_kernel(self, keyset, *args, **kwargs):
        bound = self._bound(args, kwargs)
        dev = bound.get("device")
        from .. import _device
        dev = _device.device(dev) if isinstance(dev, str) else dev
        key = _DEVICE_KEY.get(getattr(dev, "type", "cpu"), "CPU")
        if self._device_types is not None and dev.type not in self._device_types:
            raise NotImplementedError(
                f"{self._name} does not have a kernel registered for {dev.type}. Please use register_kernel "
                f"to do so.")
        return self._opoverload.redispatch(DispatchKeySet(1 << _key(key)), *args, **kwargs)

    def _bound(self, args, kwargs) -> dict:
        d = dict(zip(self._arg_names, args))
        d.update(kwargs)
        return d

    # -- registration API
    def register_kernel(self, device_types, fn=None, /):
        """Override the kernel for ``device_types`` ("cpu", ["cpu", "cuda"])."""
        types = [device_types] if isinstance(device_types, str) or device_types is None else list(device_types)

        def inner(f):
            for d in types:
                d = None if d is None else d.split(":")[0]
                if d not in self._backend_fns and (self._device_types is None or d not in self._device_types):
                    if d is None:
                        self._init_fn = f
                        continue
                    self._lib.impl(self._name, self._backend_kernel(d), _DEVICE_KEY.get(d, d))
                self._backend_fns[d] = f
            return f

        return inner(fn) if fn is not None else inner

    def register_fake(self, fn=None, /):
        """Register the fake kernel (shapes, dtypes, strides only)."""
        def inner(f):
            self._abstract_fn = f
            return f
        return inner(fn) if fn is not None else inner

    def register_autograd(self, backward, /, *, setup_context=None):
        """``backward(ctx, *grads)`` returns one gradient (or None) per positional
        input; ``setup_context(ctx, inputs, output)`` saves what it needs."""
        if self._mutated:
            raise RuntimeError(
                f"Cannot register autograd formula for non-functional operator {self!r} with schema "
                f"{self._schema}. Please create a functional operator and register an autograd formula for "
                f"that.")
        if not callable(backward):
            raise TypeError(f"register_autograd: expected backward to be a function, got {type(backward).__name__}")
        if setup_context is not None and not callable(setup_context):
            raise TypeError("register_autograd: expected setup_context to be a function or None")
        self._backward_fn = backward
        self._setup_context_fn = setup_context

    def register_autocast(self, device_type: str, cast_inputs):
        from .kernels import register_autocast
        register_autocast(self, device_type, cast_inputs)

    @contextlib.contextmanager
    def set_kernel_enabled(self, device_type: str, enabled: bool = True):
        """Within the block, the kernel from ``register_kernel(device_type)`` is
        (not) used; the function given to custom_op runs instead."""
        was = device_type not in self._disabled
        if enabled:
            self._disabled.discard(device_type)
        else:
            self._disabled.add(device_type)
        try:
            yield
        finally:
            if was:
                self._disabled.discard(device_type)
            else:
                self._disabled.add(device_type)

    def _destroy(self):
        self._lib._destroy()
        _defs.pop(self._qualname, None)


def _parse_name(name) -> tuple[str, str]:
    if not isinstance(name, str):
        raise TypeError(f"custom_op(name): name must be a str like 'mylib::my_op', got {type(name).__name__}")
    ns, sep, op = name.partition("::")
    if not sep or not ns.isidentifier() or not op.isidentifier():
        raise ValueError(f"custom_op(name): name must look like 'namespace::op_name' (e.g. 'mylib::my_op'), "
                         f"got {name!r}")
    return ns, op


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    """Wrap a function into an operator: ``custom_op("mylib::op", mutates_args=())``
    as a decorator, or ``custom_op("mylib::op", fn, mutates_args=())``."""
    ns, opname = _parse_name(name)
    if isinstance(device_types, str):
        device_types = [device_types]
    if device_types is not None:
        device_types = [d.split(":")[0] for d in device_types]

    def inner(f):
        if schema is None:
            text = infer_schema(f, mutates_args=mutates_args)
        else:
            text = schema
            parsed = _sch.parse(f"{name}{schema}")
            declared = {a.name for a in parsed.arguments if a.alias_info is not None and a.alias_info.is_write}
            if mutates_args != "unknown":
                if isinstance(mutates_args, str):
                    raise ValueError("mutates_args must either be a sequence of the names of the arguments that "
                                     "are mutated or the string 'unknown'. ")
                if declared != set(mutates_args):
                    raise ValueError(
                        f"Attempted to create a custom op with `mutates_args={mutates_args}` and `schema={schema}`. "
                        f"The schema suggests that the op mutates {declared}, which is different from what was "
                        f"provided to us in `mutates_args`. Please make these consistent.")
        parsed = _sch.parse(f"{name}{text}")
        kw_tensors = [a for a in parsed.arguments if a.kwarg_only and a.is_tensor_like]
        if kw_tensors:
            raise ValueError(f"custom_op with kwarg-only Tensor args. Please make your tensors not kwarg-only. "
                             f"Got: {parsed}")
        if not any(a.is_tensor_like for a in parsed.arguments) and \
                not any(str(a.type).startswith("Device") for a in parsed.arguments):
            raise ValueError("Functions without tensor inputs are required to have a `device: torchlet.device` "
                             "argument")
        all_tags = list(tags or ()) + ["pt2_compliant_tag"]
        old = _defs.get(name)
        if old is not None:      # defining the same name again replaces it (as in a notebook)
            old._destroy()
        d = CustomOpDef(ns, opname, text, f, device_types, all_tags)
        _defs[name] = d
        return d

    if fn is not None:
        if not inspect.isfunction(fn) and not callable(fn):
            raise TypeError("custom_op: fn must be a function")
        return inner(fn)
    return inner
