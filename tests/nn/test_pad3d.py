"""3-d reflection / replication padding (reflection_pad3d, replication_pad3d
and their backward ops), F.pad over three dims in every mode, the *Pad3d
modules, and batch_norm of an empty 1-d input: against numpy (np.pad)
always, against torch where installed (values, gradients, grad_fn names,
messages), float64 gradients and second derivatives by finite differences."""
import sys
from pathlib import Path

import numpy as np
import pytest

import torchlet
import torchlet.nn as nn
import torchlet.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "autograd"))
from _same_error import assert_same_error  # noqa: E402
from _gradcheck_util import gradcheck, gradgradcheck  # noqa: E402

R = np.random.default_rng(20261205)


def _torch():
    return pytest.importorskip("torch")


def _n(t):
    return np.asarray(t.numpy())


def np_pad(x, pad, mode):
    """pad pairs from the last dim; negative pads crop first (np.pad has no negative widths)"""
    nd = len(pad) // 2
    sl = [slice(None)] * x.ndim
    widths = [(0, 0)] * x.ndim
    for i in range(nd):
        d = x.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        widths[d] = (max(lo, 0), max(hi, 0))
        sl[d] = slice(max(-lo, 0), x.shape[d] - max(-hi, 0))
    npmode = {"reflect": "reflect", "replicate": "edge", "circular": "wrap", "constant": "constant"}[mode]
    return np.pad(x[tuple(sl)], widths, mode=npmode)


CASES = [
    ((2, 3, 4, 5, 6), (1, 2, 3, 1, 2, 0)),
    ((3, 4, 5, 6), (2, 1, 0, 3, 1, 2)),
    ((1, 2, 3, 3, 3), (2, 2, 2, 2, 2, 2)),
    ((2, 1, 4, 5, 6), (-1, 2, 1, -2, 0, 1)),
    ((2, 2, 5, 1, 3), (1, 0, 0, 0, 3, 4)),
]


@pytest.mark.parametrize("shape, pad", CASES)
@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular", "constant"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_pad3d_numpy(shape, pad, mode, dtype):
    if mode == "reflect" and any(p >= s for p, s in zip(pad, [shape[-1]] * 2 + [shape[-2]] * 2 + [shape[-3]] * 2)):
        pytest.skip("reflection pads must be below the size")
    x = (R.standard_normal(shape) * 10).astype(dtype)
    np.testing.assert_array_equal(_n(F.pad(torchlet.tensor(x), pad, mode)), np_pad(x, pad, mode))
    # non-contiguous input
    xt = torchlet.tensor(np.ascontiguousarray(np.swapaxes(x, -1, -3))).transpose(-1, -3)
    np.testing.assert_array_equal(_n(F.pad(xt, pad, mode)), np_pad(x, pad, mode))


def test_pad3d_half_and_empty_batch():
    x = R.standard_normal((2, 3, 4, 5)).astype(np.float32)
    for mode in ("reflect", "replicate"):
        h = F.pad(torchlet.tensor(x).half(), (1, 1, 2, 0, 1, 2), mode)
        assert h.dtype == torchlet.float16
        np.testing.assert_array_equal(_n(h.float()), np_pad(x.astype(np.float16).astype(np.float32),
                                                            (1, 1, 2, 0, 1, 2), mode))
        e = F.pad(torchlet.zeros(0, 2, 3, 4, 5), (1, 1, 1, 1, 1, 1), mode)
        assert tuple(e.shape) == (0, 2, 5, 6, 7)


@pytest.mark.parametrize("shape, pad", CASES[:4])
@pytest.mark.parametrize("mode", ["reflect", "replicate"])
def test_pad3d_gradcheck(shape, pad, mode):
    x = R.standard_normal(shape)
    assert gradcheck(lambda t: F.pad(t, pad, mode), [x])


def test_pad3d_backward_ops_gradgradcheck():
    for mode in ("reflect", "replicate"):
        assert gradgradcheck(lambda t: F.pad(t * t, (2, 1, 1, 0, 1, 1), mode), [R.standard_normal((1, 2, 3, 4, 3))])


def test_pad3d_backward_sums_every_source():
    # the gradient of a padded sum counts how often each input element is copied
    x = torchlet.tensor(R.standard_normal((1, 1, 3, 4, 5)), requires_grad=True)
    F.pad(x, (2, 2, 1, 3, 2, 1), "reflect").sum().backward()
    ones = np.ones((1, 1, 3, 4, 5))
    counts = np.zeros_like(ones)
    # numpy: pad an index volume and count
    idx = np.arange(60).reshape(1, 1, 3, 4, 5)
    np.add.at(counts.reshape(-1), np_pad(idx, (2, 2, 1, 3, 2, 1), "reflect").reshape(-1), 1)
    np.testing.assert_array_equal(_n(x.grad), counts)


ERRORS = [
    lambda m, x: m._C._nn.reflection_pad3d(x, (1, 2, 3, 4, 5, 1)),
    lambda m, x: m._C._nn.reflection_pad3d(x, (1, 2, 3, 4, 1, 4)),
    lambda m, x: m._C._nn.reflection_pad3d(x, (6, 2, 3, 3, 1, 1)),
    lambda m, x: m._C._nn.reflection_pad3d(x, (1, 6, 1, 1, 1, 1)),
    lambda m, x: m._C._nn.reflection_pad3d(x, (1, 2, 3)),
    lambda m, x: m._C._nn.replication_pad3d(x, (1, 2, 3)),
    lambda m, x: m._C._nn.reflection_pad3d(x[0, 0], (1, 1, 1, 1, 1, 1)),
    lambda m, x: m._C._nn.replication_pad3d(x[:, :0], (1, 1, 1, 1, 1, 1)),
    lambda m, x: m._C._nn.replication_pad3d(x, (-3, -3, -2, -3, -2, -2)),
    lambda m, x: m._C._nn.reflection_pad3d(x, (-3, -3, -2, -3, -2, -2)),
    lambda m, x: m._C._nn.reflection_pad3d(x.bool(), (1, 1, 1, 1, 1, 1)),
    lambda m, x: m._C._nn.replication_pad3d(x.bool(), (1, 1, 1, 1, 1, 1)),
    lambda m, x: m.ops.aten.reflection_pad3d_backward(m.ones(1, 2, 6, 7, 9), x, (1, 2, 1, 2, 1, 2)),
    lambda m, x: m.ops.aten.reflection_pad3d_backward(m.ones(1, 2, 6, 8, 8), x, (1, 2, 1, 2, 1, 2)),
    lambda m, x: m.ops.aten.reflection_pad3d_backward(m.ones(1, 2, 5, 8, 9), x, (1, 2, 1, 2, 1, 2)),
    lambda m, x: m.ops.aten.replication_pad3d_backward(m.ones(1, 2, 6, 7, 9), x, (1, 2, 1, 2, 1, 2)),
    lambda m, x: m.ops.aten.replication_pad3d_backward(m.ones(1, 2, 5, 8, 9), x, (1, 2, 1, 2, 1, 2)),
    lambda m, x: m.ops.aten.replication_pad3d_backward(m.ones(1, 3, 6, 8, 9), x, (1, 2, 1, 2, 1, 2)),
    lambda m, x: m.ops.aten.replication_pad3d_backward(m.ones(1, 2, 6, 8, 9).double(), x, (1, 2, 1, 2, 1, 2)),
    lambda m, x: m.ops.aten.reflection_pad3d_backward(m.ones(1, 2, 6, 8, 9).long(), x.long(), (1, 2, 1, 2, 1, 2)),
    lambda m, x: m.nn.functional.pad(x, (1,) * 6, mode="reflect", value=1.0),
    lambda m, x: m.nn.functional.pad(x[0, 0, 0], (1,) * 6, mode="reflect"),
]


@pytest.mark.parametrize("fn", ERRORS)
def test_pad3d_errors_match_torch(fn):
    assert_same_error(fn, (1, 2, 3, 5, 6))


@pytest.mark.parametrize("shape, pad", CASES)
@pytest.mark.parametrize("mode", ["reflect", "replicate"])
def test_pad3d_against_torch(shape, pad, mode):
    torch = _torch()
    if mode == "reflect" and any(p >= s for p, s in zip(pad, [shape[-1]] * 2 + [shape[-2]] * 2 + [shape[-3]] * 2)):
        pytest.skip("reflection pads must be below the size")
    x = R.standard_normal(shape)
    tx, lx = torch.tensor(x, requires_grad=True), torchlet.tensor(x, requires_grad=True)
    to, lo = torch.nn.functional.pad(tx, pad, mode), F.pad(lx, pad, mode)
    np.testing.assert_array_equal(_n(lo), to.detach().numpy())
    assert type(lo.grad_fn).__name__ == type(to.grad_fn).__name__
    g = R.standard_normal(tuple(to.shape))
    to.backward(torch.tensor(g))
    lo.backward(torchlet.tensor(g))
    np.testing.assert_allclose(_n(lx.grad), tx.grad.numpy(), rtol=1e-12, atol=1e-12)
    # float32: the backward adds in PyTorch's order
    x32 = x.astype(np.float32)
    tx, lx = torch.tensor(x32, requires_grad=True), torchlet.tensor(x32, requires_grad=True)
    torch.nn.functional.pad(tx, pad, mode).backward(torch.tensor(g.astype(np.float32)))
    F.pad(lx, pad, mode).backward(torchlet.tensor(g.astype(np.float32)))
    np.testing.assert_allclose(_n(lx.grad), tx.grad.numpy(), rtol=1e-6, atol=1e-6)


MODULES = [
    ("ZeroPad3d", (2,), (2, 3, 4, 5)), ("ConstantPad3d", ((1, 0, 2, 3, 0, 1), -1.5), (1, 2, 3, 4, 5)),
    ("ReflectionPad3d", ((1, 2, 0, 1, 2, 1),), (1, 2, 3, 4, 5)), ("ReflectionPad3d", (1,), (2, 3, 4, 5)),
    ("ReplicationPad3d", ((3, 1, 0, 2, 1, 1),), (2, 2, 3, 4, 5)), ("CircularPad3d", ((1, 0, 2, 1, 0, 1),), (1, 2, 3, 4, 5)),
]


@pytest.mark.parametrize("name, args, shape", MODULES)
def test_pad3d_modules_against_torch(name, args, shape):
    torch = _torch()
    tm, lm = getattr(torch.nn, name)(*args), getattr(nn, name)(*args)
    assert repr(lm) == repr(tm)
    x = R.standard_normal(shape).astype(np.float32)
    np.testing.assert_array_equal(_n(lm(torchlet.tensor(x))), tm(torch.tensor(x)).numpy())


def test_pad3d_autocast_runs_replication_in_float32():
    x = torchlet.ones(1, 1, 2, 2, 2, dtype=torchlet.bfloat16)
    with torchlet.autocast("cpu", dtype=torchlet.bfloat16):
        assert torchlet._C._nn.replication_pad3d(x, [1] * 6).dtype == torchlet.float32
        assert torchlet._C._nn.reflection_pad3d(x, [1] * 6).dtype == torchlet.bfloat16


# ------------------------------------------------------------------ batch_norm of an empty input


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_empty_1d_input(training):
    # an empty input returns before any size is read: a 1-d input is fine
    x = torchlet.zeros(0, dtype=torchlet.float64, requires_grad=True)
    rm, rv = torchlet.zeros(0, dtype=torchlet.float64), torchlet.ones(0, dtype=torchlet.float64)
    y = F.batch_norm(x, rm, rv, training=training)
    assert tuple(y.shape) == (0,) and type(y.grad_fn).__name__ == "CloneBackward0"
    y.sum().backward()
    assert tuple(x.grad.shape) == (0,)
    # running statistics of another size are not checked for an empty input
    assert tuple(torchlet.batch_norm(torchlet.zeros(0, 3), None, None, torchlet.zeros(2), torchlet.zeros(2),
                                     False, 0.1, 1e-5, False).shape) == (0, 3)
    with pytest.raises(IndexError):
        torchlet.batch_norm(torchlet.ones(5), None, None, None, None, True, 0.1, 1e-5, False)
