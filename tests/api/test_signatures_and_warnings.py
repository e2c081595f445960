"""The Python surface as PyTorch's: keyword-only / positional-only parameters
and parameter names of the hand-written functions; PyTorch's once-per-process
warnings (TORCH_WARN_ONCE -> the runtime's TL_WARN_ONCE) and the uint8 mask
warnings of indexing (every call, and again in index's backward)."""
import threading
import warnings

import numpy as np
import pytest

import torchlet as tl
import torchlet.nn.functional as F
from torchlet._C import lib

try:
    import torch
    import torch.nn.functional as TF
except ImportError:  # pragma: no cover
    torch = TF = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch not installed")


def _recorded(call):
    """(result or the exception's type, [warning messages])"""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = call()
        except Exception as e:  # noqa: BLE001 - the outcome is compared
            r = type(e)
    return r, [str(x.message).split(" (Triggered")[0] for x in w]


# ------------------------------------------------------------ signatures
# each call: m is torchlet or torch, f its nn.functional; True = accepted
# (PyTorch's behaviour), False = TypeError
_X = np.arange(6, dtype=np.float32).reshape(2, 3) / 4 - 0.5
_Q = np.linspace(-1, 1, 24, dtype=np.float32).reshape(1, 2, 3, 4)
SIGNATURES = [
    ("gelu approximate positional", lambda m, f: f.gelu(m.tensor(_X), "tanh"), False),
    ("gelu approximate keyword", lambda m, f: f.gelu(m.tensor(_X), approximate="tanh"), True),
    ("sdpa scale positional", lambda m, f: f.scaled_dot_product_attention(*[m.tensor(_Q)] * 3, None, 0.0, False, 0.5),
     False),
    ("sdpa is_causal positional", lambda m, f: f.scaled_dot_product_attention(*[m.tensor(_Q)] * 3, None, 0.0, True),
     True),
    ("sdpa scale keyword", lambda m, f: f.scaled_dot_product_attention(*[m.tensor(_Q)] * 3, scale=0.5,
                                                                       enable_gqa=False), True),
    ("tensor dtype positional", lambda m, f: m.tensor([1, 2], m.float64), False),
    ("tensor dtype keyword", lambda m, f: m.tensor(data=[1, 2], dtype=m.float64, requires_grad=True), True),
    ("as_tensor dtype positional", lambda m, f: m.as_tensor([1, 2], m.float64), False),
    ("as_tensor dtype keyword", lambda m, f: m.as_tensor(data=[1, 2], dtype=m.float64), True),
    ("from_numpy keyword", lambda m, f: m.from_numpy(ndarray=np.ones(2)), False),
    ("is_tensor keyword", lambda m, f: m.is_tensor(obj=m.ones(1)), False),
    ("set_default_dtype keyword", lambda m, f: m.set_default_dtype(d=m.float32), False),
    ("set_num_threads keyword", lambda m, f: m.set_num_threads(n=1), False),
    ("is_floating_point input=", lambda m, f: m.is_floating_point(input=m.ones(1)), True),
    ("numel input=", lambda m, f: m.numel(input=m.ones(2, 3)), True),
    ("set_rng_state new_state=", lambda m, f: m.set_rng_state(new_state=m.get_rng_state()), True),
]


@pytest.mark.parametrize("name, call, accepted", SIGNATURES, ids=[s[0] for s in SIGNATURES])
def test_signature(name, call, accepted):
    threads = tl.get_num_threads()
    try:
        if accepted:
            call(tl, F)
        else:
            with pytest.raises(TypeError):
                call(tl, F)
    finally:
        tl.set_num_threads(threads)


@needs_torch
@pytest.mark.parametrize("name, call, accepted", SIGNATURES, ids=[s[0] for s in SIGNATURES])
def test_signature_as_torch(name, call, accepted):
    threads = torch.get_num_threads()
    try:
        r, _ = _recorded(lambda: call(torch, TF))
    finally:
        torch.set_num_threads(threads)
    assert (r is not TypeError) == accepted


def test_keyword_only_calls_compute_the_same():
    x = tl.tensor(_X)
    t = np.tanh(np.sqrt(2 / np.pi) * (_X + 0.044715 * _X ** 3))
    np.testing.assert_allclose(F.gelu(x, approximate="tanh").numpy(), 0.5 * _X * (1 + t), rtol=1e-6, atol=1e-7)
    q = tl.tensor(_Q)
    s = _Q @ _Q.swapaxes(-1, -2) * 0.5
    p = np.exp(s - s.max(-1, keepdims=True))
    want = (p / p.sum(-1, keepdims=True)) @ _Q
    np.testing.assert_allclose(F.scaled_dot_product_attention(q, q, q, scale=0.5).numpy(), want, rtol=1e-5,
                               atol=1e-6)
    assert tl.numel(input=tl.ones(2, 3)) == 6 and tl.is_floating_point(input=tl.ones(1))


# ---------------------------------------------------------- warn once

WHERE = "where received a uint8 condition tensor"
SCATTER = "The reduce argument of torch.scatter with Tensor src is deprecated"
UINT8_INDEX = "indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead."


def _where(m):
    return m.where(m.tensor([1, 0, 1], dtype=m.uint8), m.ones(3), m.zeros(3))


def _scatter(m):
    return m.scatter(m.zeros(3), 0, m.tensor([0]), m.ones(1), reduce="add")


@pytest.mark.parametrize("call, message", [(_where, WHERE), (_scatter, SCATTER)], ids=["where", "scatter"])
def test_warn_once_per_process_and_reset(call, message):
    _, ws = _recorded(lambda: [call(tl) for _ in range(3)])
    assert [w[:len(message)] for w in ws] == [message]
    _, ws = _recorded(lambda: call(tl))
    assert ws == []
    lib.tl_reset_warn_once()  # the test hook re-arms every site
    _, ws = _recorded(lambda: [call(tl) for _ in range(2)])
    assert [w[:len(message)] for w in ws] == [message]
    r, _ = _recorded(lambda: _where(tl))
    np.testing.assert_array_equal(r.numpy(), [1.0, 0.0, 1.0])


@needs_torch
@pytest.mark.parametrize("call, message", [(_where, WHERE), (_scatter, SCATTER)], ids=["where", "scatter"])
def test_warn_once_as_torch(call, message):
    _, ws = _recorded(lambda: [call(torch) for _ in range(3)])
    assert len(ws) <= 1   # torch cannot be re-armed: it may have warned earlier in this process
    _, ws = _recorded(lambda: call(torch))
    assert ws == []


def test_warn_once_is_once_across_threads():
    barrier = threading.Barrier(4)
    c, a, b = tl.tensor([1, 0], dtype=tl.uint8), tl.ones(2), tl.zeros(2)
    errors = []

    def work():
        try:
            barrier.wait()
            for _ in range(50):
                tl.where(c, a, b)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    def run():
        ts = [threading.Thread(target=work) for _ in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()

    _, ws = _recorded(run)
    assert errors == []
    assert [w[:len(WHERE)] for w in ws] == [WHERE]


# ---------------------------------------------------- uint8 index masks
# PyTorch's TORCH_WARN (every call): the forward warns, and index's backward
# (index_put_ with the saved uint8 mask) warns again; a wrong-shaped mask
# warns and then raises the IndexError

def _index_cases(m):
    x = m.arange(12.0).reshape(3, 4)
    mask = m.tensor([1, 0, 1], dtype=m.uint8)
    bad = m.tensor([1, 0], dtype=m.uint8)

    def backward():
        xr = m.arange(12.0).reshape(3, 4).requires_grad_()
        y = (xr[mask] * 2).sum()
        _, ws = _recorded(y.backward)
        return ws, xr.grad

    return {
        "getitem": lambda: x[mask],
        "getitem twice": lambda: [x[mask], x[mask]],
        "getitem with a slice": lambda: x[mask, 1:],
        "two masks": lambda: m.arange(9.0).reshape(3, 3)[mask, mask],
        "index_put_": lambda: x.clone().index_put_((mask,), m.ones(4)),
        "index_put_ wrong-shaped mask": lambda: x.clone().index_put_((bad,), m.ones(4)),
        "getitem wrong-shaped mask": lambda: x[bad],
        "backward": backward,
    }


CASES = list(_index_cases(tl))


def _outcome(m, name):
    r, ws = _recorded(_index_cases(m)[name])
    if name == "backward":
        (bws, grad), ws = r, ws + ["-- backward --"] + r[0]
        r = grad
    return r, ws


@pytest.mark.parametrize("name", CASES)
def test_uint8_index_warnings(name):
    r, ws = _outcome(tl, name)
    counts = {"getitem twice": 2, "two masks": 2}
    if name == "backward":
        assert ws == [UINT8_INDEX, "-- backward --", UINT8_INDEX]
        want = np.zeros((3, 4), np.float32)
        want[[0, 2]] = 2
        np.testing.assert_array_equal(r.numpy(), want)
        return
    assert ws == [UINT8_INDEX] * counts.get(name, 1)
    if "wrong-shaped" in name:
        assert r is IndexError
    elif name == "getitem":
        np.testing.assert_array_equal(r.numpy(), np.arange(12.0).reshape(3, 4)[[0, 2]])


@needs_torch
@pytest.mark.parametrize("name", CASES)
def test_uint8_index_warnings_as_torch(name):
    r, ws = _outcome(tl, name)
    tr, tws = _outcome(torch, name)
    assert ws == tws
    if isinstance(r, type):
        assert r is tr
    elif isinstance(r, tl.Tensor):
        np.testing.assert_array_equal(r.numpy(), tr.numpy())


def test_uint8_index_warning_points_at_the_callers_line():
    x, mask = tl.ones(3), tl.tensor([1, 0, 1], dtype=tl.uint8)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        x[mask]
    assert [(x.filename, x.category) for x in w] == [(__file__, UserWarning)]
