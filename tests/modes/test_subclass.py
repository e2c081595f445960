"""Tensor subclasses with __torch_dispatch__ (wrapper subclasses at the Python key)."""
import gc

import pytest

import torchlet
from torchlet._C import lib


class Logged(torchlet.Tensor):
    """PyTorch's classic wrapper subclass: metadata of `elem`, calls unwrapped."""
    log: list = []

    @staticmethod
    def __new__(cls, elem):
        r = torchlet.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype, device=elem.device,
                                                   requires_grad=elem.requires_grad)
        r.elem = elem
        return r

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        cls.log.append((str(func), types))

        def unwrap(v):
            return v.elem if isinstance(v, Logged) else v

        def wrap(v):
            return Logged(v) if isinstance(v, torchlet.Tensor) and not isinstance(v, Logged) else v

        out = func(*(unwrap(a) for a in args), **{k: unwrap(v) for k, v in (kwargs or {}).items()})
        return tuple(wrap(o) for o in out) if isinstance(out, tuple) else wrap(out)


@pytest.fixture(autouse=True)
def _clear_log():
    Logged.log = []


def test_wrapper_subclass_calls_reach_torch_dispatch():
    x = Logged(torchlet.tensor([1.0, 2.0]))
    assert x.shape == (2,) and x.device == torchlet.device("cpu") and x.dtype == torchlet.float32
    y = x * 3 + 1
    assert isinstance(y, Logged) and y.elem.tolist() == [4.0, 7.0]
    assert [f for f, _ in Logged.log] == ["aten.mul.Tensor", "aten.add.Tensor"]
    assert Logged.log[0][1] == (Logged,)


def test_subclass_object_identity_and_state_survive():
    x = Logged(torchlet.ones(3))
    r = x.add_(1)            # in place: the very same object comes back
    assert r is x and x.elem.tolist() == [2.0, 2.0, 2.0]


def test_state_travels_with_the_c_tensor_and_is_released():
    from torchlet import _subclass
    gc.collect()                    # earlier tests' subclass tensors in cycles go first
    before = len(_subclass._states)
    x = Logged(torchlet.ones(2))
    assert len(_subclass._states) == before + 1
    p = x._p
    lib.tl_tensor_retain(p)
    del x
    gc.collect()
    again = _subclass.wrap(p)       # the object died; the C tensor rebuilds it with its state
    assert isinstance(again, Logged) and again.elem.tolist() == [1.0, 1.0]
    del again
    gc.collect()
    assert len(_subclass._states) == before


def test_plain_and_subclass_mixed_and_types_order():
    class Sub(Logged):
        pass

    a, b = Logged(torchlet.ones(2)), Sub(torchlet.ones(2))
    a + b
    assert Logged.log[-1][1] == (Sub, Logged)        # subclasses before their bases
    plain = torchlet.ones(2)
    r = plain + a
    assert isinstance(r, Logged)


def test_subclass_not_implemented_error():
    class No(torchlet.Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    s = torchlet.Tensor._make_wrapper_subclass(No, (2,))
    with pytest.raises(TypeError, match=r"Multiple dispatch failed for 'torchlet._ops.aten.sin.default'; all "
                                        r"__torch_dispatch__ handlers returned NotImplemented:\n\n  - tensor "
                                        r"subclass <class '.*No'>"):
        torchlet.sin(s)


def test_views_of_a_subclass_are_plain_until_wrapped():
    x = Logged(torchlet.ones(2, 2))
    from torchlet._python_dispatch import PYTHON_KEY_BIT
    assert lib.tl_tensor_key_set(x._p) & PYTHON_KEY_BIT
    v = lib.tl_alias(x._p)
    assert not lib.tl_tensor_key_set(v) & PYTHON_KEY_BIT and lib.tl_tensor_py_slot(v) == torchlet._C.ffi.NULL
    lib.tl_tensor_release(v)
