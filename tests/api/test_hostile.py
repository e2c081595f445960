"""Every generated binding called with hostile arguments raises a Python
exception of a standard type; nothing crashes or aborts."""
import itertools

import pytest

import torchlet as tl
from torchlet._generated import _ops

OK = (TypeError, ValueError, RuntimeError, IndexError, NotImplementedError, OverflowError, MemoryError)

JUNK = [None, "x", 2 ** 70, -(2 ** 70), -1, 10 ** 6, 1.5, float("nan"), True, (), (2 ** 63,), [-5, -5], (1, "a"),
        object(), tl.float64, "meta", tl.empty(0), tl.empty(2, 3, device="meta"), tl.ones(()),
        tl.ones(3, dtype=tl.int8)]

SKIP = {"empty", "empty_strided", "zeros", "ones", "full", "rand", "randn", "arange", "empty_like",
        "zeros_like", "ones_like", "full_like", "rand_like", "randn_like", "expand"}  # huge sizes would allocate


def _calls(fn, base):
    for x in JUNK:
        yield (*base, x)
    for x, y in itertools.product(JUNK[::3], JUNK[1::4]):
        yield (*base, x, y)


@pytest.mark.parametrize("name", [n for n in _ops.__all__ if n not in SKIP])
def test_functions_survive_junk(name):
    fn = getattr(tl, name)
    t = tl.ones(2, 3)
    for args in _calls(fn, (t,)):
        try:
            fn(*args)
        except OK:
            pass


@pytest.mark.parametrize("name", sorted(n for (k, n) in _ops.SIGNATURES if k == "method" and n not in SKIP))
def test_methods_survive_junk(name):
    t = tl.ones(2, 3)
    fn = getattr(t, name)
    for args in _calls(fn, ()):
        try:
            fn(*args)
        except OK:
            pass
        t = tl.ones(2, 3)
        fn = getattr(t, name)


def test_factories_reject_bad_sizes_without_crashing():
    for f in (tl.zeros, tl.ones, tl.empty):
        for bad in ((-1,), ("a",), (2 ** 70,), (None,), ((2, -3),)):
            with pytest.raises(OK):
                f(*bad)
        with pytest.raises(OK):
            f(2 ** 40, 2 ** 40)


@pytest.mark.parametrize("name", sorted(tl._C._nn.__all__))
def test_nn_functions_survive_junk(name):
    """the python_module: nn bindings (torchlet._C._nn) too"""
    fn = getattr(tl._C._nn, name)
    t = tl.ones(2, 3)
    for args in _calls(fn, (t,)):
        try:
            fn(*args)
        except OK:
            pass
