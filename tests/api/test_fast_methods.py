"""Tensor's CPython methods (torchlet/_fast.py, runtime/python/fastcall.c):
``x.view(...)``, ``x.t()`` and ``x[i]`` taken in C give what the Python path
gives -- values, sizes, strides, shared storage and version counter,
requires_grad / grad_fn and gradients, errors (kind and text) -- and
torch-function modes and tensor subclasses still see every call."""
import contextlib
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import torchlet
from torchlet import _fast
from torchlet._C import ffi

pytestmark = pytest.mark.skipif(_fast.TensorBase is None, reason="this build has no torchlet._C_fast")


@contextlib.contextmanager
def python_path():
    """Every call through the Python functions the C methods replace."""
    was = _fast.enabled
    _fast.set_enabled(False)
    try:
        yield
    finally:
        _fast.set_enabled(was)


@contextlib.contextmanager
def c_only():
    """The C paths on, and the Python paths raising: a call that reaches
    them is a failure (so the comparisons below compare two paths)."""
    def boom(*a, **k):
        raise AssertionError("took the Python path")

    saved = list(_fast._python)
    _fast._mod._set_python(boom, boom, boom)
    try:
        yield
    finally:
        _fast._mod._set_python(*saved)


def _both(fn, plain):
    """fn() through the C methods and on the Python path: (result or
    exception) each. A `plain` call that succeeds must not have needed the
    Python path (it is run once more with that path raising)."""
    def run():
        try:
            return fn()
        except Exception as e:  # noqa: BLE001 - compared below
            return e
    assert _fast.enabled, "the C paths are off in this process"
    a = run()
    with python_path():
        b = run()
    if plain and not isinstance(b, Exception):
        with c_only():
            _same_outcome(run(), b)
    return a, b


def _same_tensor(a, b):
    assert type(a) is type(b) is torchlet.Tensor
    assert a.shape == b.shape and a.stride() == b.stride() and a.dtype == b.dtype
    assert a.storage_offset() == b.storage_offset() and a.data_ptr() == b.data_ptr()
    assert a.requires_grad == b.requires_grad and a.is_leaf == b.is_leaf
    assert type(a.grad_fn).__name__ == type(b.grad_fn).__name__
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def _same_outcome(a, b):
    if isinstance(b, Exception):
        assert type(a) is type(b) and str(a) == str(b)
    else:
        _same_tensor(a, b)


def test_layout_check_passes_and_paths_are_on():
    assert _fast.layout_ok(ffi)
    assert _fast.enabled
    assert torchlet.Tensor.__mro__[1] is _fast.TensorBase


def _sources():
    rng = np.random.default_rng(0)
    base = torchlet.tensor(rng.standard_normal((3, 4)).astype(np.float32))
    return {
        "contiguous": base,
        "transposed": base.t(),
        "strided": torchlet.tensor(rng.standard_normal((5, 6))).t()[1:4:2],
        "int64": torchlet.arange(12).view(3, 4),
        "0-dim": torchlet.tensor(2.5),
        "empty": torchlet.empty(0, 3),
        "grad": torchlet.tensor(rng.standard_normal((2, 6)), requires_grad=True),
        "1-d": torchlet.arange(6.0),
    }


VIEW_ARGS = [(12,), (-1,), (3, 4), (4, -1), (2, 2, 3), ((6, 2),), ([2, 6],), (1, 12), (0,), (0, 3), (3, 0),
             (5,), (2, -1, -1), (), ((),), (1,), (2 ** 70,), (True,), (2.0, 6), ("a",)]


@pytest.mark.parametrize("src", list(_sources()))
@pytest.mark.parametrize("args", VIEW_ARGS, ids=repr)
def test_view_same_as_python_path(src, args):
    x = _sources()[src]
    sizes = args[0] if len(args) == 1 and type(args[0]) in (tuple, list) else args
    plain = 0 < len(sizes) <= 8 and all(type(v) is int and abs(v) < 2 ** 63 for v in sizes)
    _same_outcome(*_both(lambda: x.view(*args), plain))


@pytest.mark.parametrize("src", list(_sources()))
def test_t_same_as_python_path(src):
    x = _sources()[src]
    _same_outcome(*_both(lambda: x.t(), True))


@pytest.mark.parametrize("src", list(_sources()))
@pytest.mark.parametrize("i", [0, 1, -1, 2, -3, 5, -7, 2 ** 63, -(2 ** 64)])
def test_int_index_same_as_python_path(src, i):
    x = _sources()[src]
    _same_outcome(*_both(lambda: x[i], abs(i) < 2 ** 63))


def test_other_forms_reach_the_python_path():
    x = torchlet.arange(12.0).view(3, 4)
    assert x.view(size=(4, 3)).shape == (4, 3)
    assert x.view(torchlet.int32).dtype == torchlet.int32
    assert x.view(torchlet.Size([2, 6])).shape == (2, 6)
    assert x[1:, ::2].tolist() == [[4.0, 6.0], [8.0, 10.0]]
    assert x[True].shape == (1, 3, 4) and x[np.int64(1)].tolist() == [4.0, 5.0, 6.0, 7.0]
    assert x[torchlet.tensor(2)].tolist() == [8.0, 9.0, 10.0, 11.0]
    with pytest.raises(TypeError, match=r"^TensorBase\.t\(\) takes no arguments \(1 given\)$"):
        x.t(0)                # PyTorch's text (its Tensor's C base is TensorBase too)
    with pytest.raises(TypeError):
        x.view(2, 6, nonsense=1)


def test_views_share_storage_version_and_autograd():
    for fast in (True, False):
        with contextlib.nullcontext() if fast else python_path():
            base = torchlet.arange(6.0).requires_grad_()
            x = base * 1
            v, t, s = x.view(2, 3), x.view(2, 3).t(), x[4]
            assert type(v.grad_fn).__name__ == "ViewBackward0"
            assert type(t.grad_fn).__name__ == "TBackward0"
            assert type(s.grad_fn).__name__ == "SelectBackward0"
            assert v.data_ptr() == t.data_ptr() == x.data_ptr() and s.data_ptr() == x.data_ptr() + 4 * 4
            before = x._version
            with torchlet.no_grad():
                v[0].add_(10)       # through two views: the base sees it, the counter is shared
            assert x._version == before + 1 == v._version == s._version
            assert x.tolist()[:3] == [10.0, 11.0, 12.0]
            (v.sum() * 2 + t.sum() + s * 3).backward()
            assert base.grad.tolist() == [3.0, 3.0, 3.0, 3.0, 6.0, 3.0]


def test_modes_see_the_method_itself():
    from torchlet.overrides import TorchFunctionMode, resolve_name

    class Log(TorchFunctionMode):
        def __init__(self):
            self.funcs = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.funcs.append((func, args, kwargs))
            return func(*args, **(kwargs or {}))

    x = torchlet.arange(6.0)
    for fast in (True, False):
        with contextlib.nullcontext() if fast else python_path():
            with Log() as m:
                a = x.view(2, 3)
                b = a.t()
                c = b[1]
                d = x.view(size=(3, 2))
            assert [f for f, _, _ in m.funcs] == [torchlet.Tensor.view, torchlet.Tensor.t,
                                                  torchlet.Tensor.__getitem__, torchlet.Tensor.view]
            assert m.funcs[0][1] == (x, 2, 3) and m.funcs[2][1] == (b, 1) and m.funcs[3][2] == {"size": (3, 2)}
            assert c.tolist() == [1.0, 4.0] and d.shape == (3, 2)
    assert resolve_name(torchlet.Tensor.view) == "torchlet.Tensor.view"
    assert torchlet.Tensor.view.__name__ == "view" and torchlet.Tensor.__getitem__.__name__ == "__getitem__"


def test_mode_result_replaces_the_call():
    from torchlet.overrides import TorchFunctionMode

    class Const(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return "from the mode"

    x = torchlet.ones(4)
    with Const():
        assert x.view(2, 2) == "from the mode" and x.t() == "from the mode" and x[0] == "from the mode"


def test_subclass_tensors_keep_their_class():
    """In a fresh process: the first subclass instance switches the result
    check on for the rest of the process; the C paths stay on."""
    code = textwrap.dedent("""
        import torchlet
        from torchlet import _fast

        class Logged(torchlet.Tensor):
            log = []

            @staticmethod
            def __new__(cls, elem):
                r = torchlet.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype, device=elem.device)
                r.elem = elem
                return r

            @classmethod
            def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
                cls.log.append(str(func))
                unwrap = lambda v: v.elem if isinstance(v, Logged) else v
                out = func(*(unwrap(a) for a in args), **{k: unwrap(v) for k, v in (kwargs or {}).items()})
                return Logged(out) if isinstance(out, torchlet.Tensor) else out

        assert _fast.enabled
        x = torchlet.arange(6.0)
        y = x.view(2, 3)                         # C path, before any subclass exists
        s = Logged(torchlet.arange(6.0))
        v, t, i = s.view(2, 3), s.view(2, 3).t(), s[4]
        assert all(type(r) is Logged for r in (v, t, i)), [type(r) for r in (v, t, i)]
        assert Logged.log == ["aten.view.default", "aten.view.default", "aten.t.default", "aten.select.int"], Logged.log
        assert i.elem.item() == 4.0 and t.elem.shape == (3, 2)
        assert type(y.view(6)) is torchlet.Tensor and type(x[0]) is torchlet.Tensor

        def boom(*a, **k):
            raise AssertionError("took the Python path")
        _fast._mod._set_python(boom, boom, boom)   # plain calls stay in C, subclass or not
        Logged.log = []
        v, t, i = s.view(3, 2), s.t(), s[1]
        assert all(type(r) is Logged for r in (v, t, i)) and i.elem.item() == 1.0
        assert Logged.log == ["aten.view.default", "aten.t.default", "aten.select.int"], Logged.log
        assert type(x.view(2, 3)) is torchlet.Tensor and type(x.t()) is torchlet.Tensor and x[5].item() == 5.0
        print("ok")
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr


def test_switch_off_by_environment():
    code = "import torchlet; from torchlet import _fast; x = torchlet.arange(4.0); " \
           "print(_fast.enabled, x.view(2, 2).shape, x.t().shape, x[1].item())"
    env = dict(os.environ, TORCHLET_NO_FAST_METHODS="1")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0 and r.stdout.split() == ["False", "torchlet.Size([2,", "2])", "torchlet.Size([4])",
                                                       "1.0"], r.stdout + r.stderr


def test_same_as_torch():
    torch = pytest.importorskip("torch")
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x, tx = torchlet.tensor(a), torch.tensor(a)
    for f in (lambda m: m.view(4, 3), lambda m: m.view(-1), lambda m: m.t(), lambda m: m[1], lambda m: m[-3],
              lambda m: m.t().view(12), lambda m: m[3], lambda m: m.view(5), lambda m: m[0][0][0],
              lambda m: m.view(2, 3, 2).t()):
        try:
            want = f(tx)
        except Exception as e:  # noqa: BLE001
            with pytest.raises(type(e)) as got:
                f(x)
            assert str(got.value).replace("torchlet", "torch") == str(e)
            continue
        got = f(x)
        assert tuple(got.shape) == tuple(want.shape) and got.stride() == want.stride()
        np.testing.assert_array_equal(got.numpy(), want.numpy())
