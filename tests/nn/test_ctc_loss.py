"""ctc_loss / _ctc_loss / _ctc_loss_backward, F.ctc_loss and nn.CTCLoss:
against a numpy forward recursion in probability space (float64) always,
float64 gradchecks through log_softmax (PyTorch's gradient formula assumes
normalized log-probabilities, as its OpInfo's gradcheck wrapper does), and
against torch where installed (values, gradients, messages)."""
import sys
from pathlib import Path

import numpy as np
import pytest

import torchlet
import torchlet.nn as nn
import torchlet.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "autograd"))
from _gradcheck_util import gradcheck  # noqa: E402

R = np.random.default_rng(20261205)


def _log_probs(T, N, C, dtype=np.float64):
    x = R.standard_normal((T, N, C))
    x = x - np.log(np.exp(x).sum(-1, keepdims=True))
    return x.astype(dtype)


def np_ctc_nll(lp, target, T, blank=0):
    """-log p(target | lp[:T]) by the forward recursion over the blank-augmented target."""
    p = np.exp(lp[:T].astype(np.float64))
    ext = [blank]
    for c in target:
        ext += [int(c), blank]
    S = len(ext)
    if T == 0:
        return 0.0 if len(target) == 0 else np.inf
    a = np.zeros(S)
    a[0] = p[0, blank]
    if S > 1:
        a[1] = p[0, ext[1]]
    for t in range(1, T):
        n = a.copy()
        for s in range(S):
            v = a[s] + (a[s - 1] if s > 0 else 0)
            if s > 1 and ext[s] != ext[s - 2]:
                v += a[s - 2]
            n[s] = v * p[t, ext[s]]
        a = n
    like = a[-1] + (a[-2] if S > 1 else 0)
    return -np.log(like) if like > 0 else np.inf


def _case(T=12, N=4, C=6, S=5, blank=0):
    lp = _log_probs(T, N, C)
    il = R.integers(T // 2, T + 1, N)
    il[0] = T
    tl = R.integers(0, S + 1, N)
    tl[0] = S
    labels = [b for b in range(C) if b != blank]
    tg = R.choice(labels, (N, S))
    tg[1, :2] = tg[1, 0]  # a repeated label (needs the blank between)
    return lp, tg, il, tl


def _ref(lp, tg, il, tl, blank=0):
    return np.array([np_ctc_nll(lp[:, b], tg[b, :tl[b]], il[b], blank) for b in range(lp.shape[1])])


@pytest.mark.parametrize("blank", [0, 3])
@pytest.mark.parametrize("layout", ["padded", "concat"])
@pytest.mark.parametrize("lengths", ["list", "tensor"])
@pytest.mark.parametrize("tdtype", [torchlet.int64, torchlet.int32])
def test_forward_numpy(blank, layout, lengths, tdtype):
    lp, tg, il, tl = _case(blank=blank)
    ref = _ref(lp, tg, il, tl, blank)
    if layout == "padded":
        t = torchlet.tensor(tg).to(tdtype)
    else:
        t = torchlet.tensor(np.concatenate([tg[b, :tl[b]] for b in range(len(tl))])).to(tdtype)
    ilv, tlv = (il.tolist(), tl.tolist()) if lengths == "list" else (torchlet.tensor(il), torchlet.tensor(tl))
    x = torchlet.tensor(lp)
    out = F.ctc_loss(x, t, ilv, tlv, blank=blank, reduction="none")
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-10)
    np.testing.assert_allclose(F.ctc_loss(x, t, ilv, tlv, blank=blank, reduction="sum").item(), ref.sum(),
                               rtol=1e-10)
    np.testing.assert_allclose(F.ctc_loss(x, t, ilv, tlv, blank=blank).item(),
                               (ref / np.maximum(tl, 1)).mean(), rtol=1e-10)
    nll, alpha = torchlet._ctc_loss(x, t, ilv, tlv, blank)
    assert alpha.shape == (4, 12, 2 * int(tl.max()) + 1)
    np.testing.assert_allclose(nll.numpy(), ref, rtol=1e-10)


def test_float32_noncontiguous_unbatched_and_module():
    lp, tg, il, tl = _case()
    x = torchlet.tensor(lp.astype(np.float32).transpose(1, 0, 2).copy()).transpose(0, 1)
    assert not x.is_contiguous()
    out = nn.CTCLoss(reduction="none")(x, torchlet.tensor(tg), il.tolist(), tl.tolist())
    assert out.dtype == torchlet.float32
    np.testing.assert_allclose(out.numpy(), _ref(lp.astype(np.float32), tg, il, tl), rtol=2e-5)
    one = F.ctc_loss(torchlet.tensor(lp[:, 0]), torchlet.tensor(tg[0]), [int(il[0])], [int(tl[0])],
                     reduction="none")
    assert one.shape == ()
    np.testing.assert_allclose(one.item(), np_ctc_nll(lp[:, 0], tg[0], il[0]), rtol=1e-10)
    assert "CTCLoss()" == repr(nn.CTCLoss())


def test_impossible_alignment_and_zero_infinity():
    lp = _log_probs(3, 2, 4)
    tg = torchlet.tensor(np.array([[1, 1, 1], [1, 2, 3]]))  # 1 1 1 needs 5 frames
    x = torchlet.tensor(lp, requires_grad=True)
    out = F.ctc_loss(x, tg, [3, 3], [3, 3], reduction="none")
    assert np.isinf(out.numpy()[0]) and np.isfinite(out.numpy()[1])
    z = F.ctc_loss(x, tg, [3, 3], [3, 3], reduction="sum", zero_infinity=True)
    np.testing.assert_allclose(z.item(), out.numpy()[1], rtol=1e-12)
    z.backward()
    g = x.grad.numpy()
    assert np.all(g[:, 0] == 0) and np.all(np.isfinite(g))
    # zero lengths: an empty target over no frames costs nothing
    e = F.ctc_loss(x, tg, [0, 2], [0, 0], reduction="none")
    assert e.numpy()[0] == 0
    np.testing.assert_allclose(e.numpy()[1], -(lp[0, 1, 0] + lp[1, 1, 0]), rtol=1e-12)


def test_gradcheck_through_log_softmax():
    T, N, C = 6, 3, 4
    x = torchlet.tensor(R.standard_normal((T, N, C)), requires_grad=True)
    tg = torchlet.tensor(np.array([[1, 2, 2], [3, 1, 0], [2, 0, 0]]))
    for red in ("none", "mean", "sum"):
        assert gradcheck(lambda a: F.ctc_loss(a.log_softmax(2), tg, [6, 5, 4], [3, 2, 1], reduction=red), [x])
    cat = torchlet.tensor(np.array([1, 2, 2, 3, 1, 2]))
    assert gradcheck(lambda a: F.ctc_loss(a.log_softmax(2), cat, torchlet.tensor([6, 6, 3]),
                                          torchlet.tensor([3, 2, 1]), reduction="sum"), [x])


def test_backward_beyond_input_length_is_zero():
    lp, tg, il, tl = _case()
    il[1] = 3
    x = torchlet.tensor(lp, requires_grad=True)
    F.ctc_loss(x, torchlet.tensor(tg), il.tolist(), tl.tolist(), reduction="sum").backward()
    assert np.all(x.grad.numpy()[3:, 1] == 0)


ERRORS = [
    # (log_probs shape, targets, input_lengths, target_lengths, blank, message)
    ((5, 2, 4), np.ones((2, 3)), [5, 5], [3, 3], 0, "to have scalar type Int; but got torch.DoubleTensor"),
    ((5, 4), np.ones((2, 3), np.int64), [5, 5], [3, 3], 0, "Expected 3-dimensional tensor, but got 2-dimensional"),
    ((5, 2, 4), np.ones((2, 3, 2), np.int64), [5, 5], [3, 3], 0, "Expected 1 to 2 dimensions, but got 3-dimensional"),
    ((5, 2, 4), np.ones((2, 3), np.int64), [5, 5], [3, 4], 0, "Expected tensor to have size at least 4 at dimension 1"),
    ((5, 2, 4), np.ones(5, np.int64), [5, 5], [3, 3], 0, "Expected tensor to have size 6 at dimension 0, but got size 5"),
    ((5, 2, 4), np.ones((3, 3), np.int64), [5, 5], [3, 3], 0, "Expected tensor to have size 2 at dimension 0"),
    ((5, 2, 4), np.ones((2, 3), np.int64), [5, 6], [3, 3], 0, "Expected input_lengths to have value at most 5"),
    ((5, 2, 4), np.ones((2, 3), np.int64), [5, -1], [3, 3], 0, "Expected input_lengths to have value at least 0"),
    ((5, 2, 4), np.ones((2, 3), np.int64), [5, 5], [3, -1], 0, "Expected target_lengths to have value at least 0"),
    ((5, 2, 4), np.ones((2, 3), np.int64), [5], [3, 3], 0, "input_lengths must be of size batch_size"),
    ((5, 2, 4), np.ones((2, 3), np.int64), [5, 5], [3], 0, "target_lengths must be of size batch_size"),
    ((5, 2, 4), np.ones((2, 3), np.int64), [5, 5], [3, 3], 4, "blank must be in label range"),
    ((0, 2, 4), np.ones((2, 3), np.int64), [0, 0], [3, 3], 0, "log_probs tensor must not be empty"),
]


@pytest.mark.parametrize("shape,tg,il,tl,blank,msg", ERRORS)
def test_errors(shape, tg, il, tl, blank, msg):
    x = torchlet.zeros(shape, dtype=torchlet.float64)
    with pytest.raises(RuntimeError, match=msg.replace("(", r"\(")):
        torchlet._ctc_loss(x, torchlet.tensor(tg), il, tl, blank)
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match=msg.replace("(", r"\(")):
        torch._ctc_loss(torch.zeros(shape, dtype=torch.float64), torch.tensor(tg), il, tl, blank)


def test_more_errors():
    x = torchlet.zeros(5, 2, 4)
    t = torchlet.ones(2, 3, dtype=torchlet.int64)
    with pytest.raises(NotImplementedError, match="\"ctc_loss_cpu\" not implemented for 'Half'"):
        torchlet._ctc_loss(x.half(), t, [5, 5], [3, 3])
    with pytest.raises(RuntimeError, match="input_lengths must be integral"):
        F.ctc_loss(x, t, torchlet.tensor([5.0, 5.0]), torchlet.tensor([3, 3]))
    with pytest.raises(RuntimeError, match="target_lengths must be integral"):
        F.ctc_loss(x, t, torchlet.tensor([5, 5]), torchlet.tensor([3.0, 3.0]))
    with pytest.raises(RuntimeError, match="target label 7 is out of range for 4 classes"):
        F.ctc_loss(x, torchlet.full((2, 3), 7, dtype=torchlet.int64), [5, 5], [3, 3])
    with pytest.raises(ValueError, match="bogus is not a valid value for reduction"):
        F.ctc_loss(x, t, [5, 5], [3, 3], reduction="bogus")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_matches_torch(dtype, zero_infinity):
    torch = pytest.importorskip("torch")
    T, N, C, S = 30, 5, 7, 12
    x = R.standard_normal((T, N, C)).astype(dtype)
    tg = R.integers(1, C, (N, S))
    il = [30, 20, 30, 11, 25]
    tl = [12, 5, 0, 9, 12]  # item 3 cannot align (inf loss)
    for red in ("none", "mean", "sum"):
        tx = torch.tensor(x, requires_grad=True)
        lx = torchlet.tensor(x, requires_grad=True)
        to = torch.nn.functional.ctc_loss(tx.log_softmax(2), torch.tensor(tg), il, tl, reduction=red,
                                          zero_infinity=zero_infinity)
        lo = F.ctc_loss(lx.log_softmax(2), torchlet.tensor(tg), il, tl, reduction=red, zero_infinity=zero_infinity)
        tol = 1e-5 if dtype == "float32" else 1e-12
        np.testing.assert_allclose(lo.detach().numpy(), to.detach().numpy(), rtol=tol, atol=tol)
        if zero_infinity:
            go = R.standard_normal(to.shape).astype(dtype)
            to.backward(torch.tensor(go))
            lo.backward(torchlet.tensor(go))
            np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=tol * 10, atol=tol * 10)
