"""F.multi_head_attention_forward, nn.MultiheadAttention and the Transformer
layers: a numpy reference of the attention always; with torch installed, a
torch module's state_dict loaded into torchlet's and outputs, attention
weights and gradients compared (eval, and train with dropout 0), PyTorch's
messages, float64 gradchecks."""
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import torchlet
import torchlet.nn as nn
import torchlet.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "autograd"))
from _gradcheck_util import gradcheck  # noqa: E402

R = np.random.default_rng(20261205)


def _x(*shape):
    return R.standard_normal(shape).astype(np.float32)


def _np_softmax(a):
    e = np.exp(a - a.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_mha_numpy_reference():
    L, S, N, E, H = 5, 7, 3, 8, 2
    m = nn.MultiheadAttention(E, H)
    q, k = _x(L, N, E), _x(S, N, E)
    mask = R.random((L, S)) < 0.3
    mask[:, 0] = False
    out, w = m(torchlet.tensor(q), torchlet.tensor(k), torchlet.tensor(k), attn_mask=torchlet.tensor(mask),
               average_attn_weights=False)
    W = m.in_proj_weight.detach().numpy()
    b = m.in_proj_bias.detach().numpy()
    qp, kp, vp = q @ W[:E].T + b[:E], k @ W[E:2 * E].T + b[E:2 * E], k @ W[2 * E:].T + b[2 * E:]
    D = E // H
    ref_w = np.empty((N, H, L, S), np.float32)
    ref_o = np.empty((L, N, E), np.float32)
    for n in range(N):
        for h in range(H):
            sl = slice(h * D, (h + 1) * D)
            s = qp[:, n, sl] @ kp[:, n, sl].T / np.sqrt(D) + np.where(mask, -np.inf, 0)
            ref_w[n, h] = _np_softmax(s)
            ref_o[:, n, sl] = ref_w[n, h] @ vp[:, n, sl]
    ref_o = ref_o @ m.out_proj.weight.detach().numpy().T + m.out_proj.bias.detach().numpy()
    np.testing.assert_allclose(w.numpy(), ref_w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out.detach().numpy(), ref_o, rtol=1e-4, atol=1e-5)
    # need_weights=False takes scaled_dot_product_attention: same output
    out2, none = m(torchlet.tensor(q), torchlet.tensor(k), torchlet.tensor(k), attn_mask=torchlet.tensor(mask),
                   need_weights=False)
    assert none is None
    np.testing.assert_allclose(out2.detach().numpy(), ref_o, rtol=1e-4, atol=1e-5)


def test_mha_state_dict_keys_and_errors():
    m = nn.MultiheadAttention(8, 2, add_bias_kv=True, kdim=3, vdim=5)
    assert list(m.state_dict()) == ["q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias", "bias_k",
                                    "bias_v", "out_proj.weight", "out_proj.bias"]
    assert "NonDynamicallyQuantizableLinear(in_features=8, out_features=8, bias=True)" in repr(m)
    with pytest.raises(ValueError, match="embed_dim and num_heads must be greater than 0"):
        nn.MultiheadAttention(0, 2)
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(7, 2)
    m = nn.MultiheadAttention(4, 2)
    q = torchlet.zeros(3, 2, 4)
    with pytest.raises(AssertionError, match="expected `key` and `value` to be 3-D"):
        m(q, torchlet.zeros(3, 4), torchlet.zeros(3, 4))
    with pytest.raises(AssertionError, match="only bool and floating types of attn_mask are supported"):
        m(q, q, q, attn_mask=torchlet.zeros(3, 3, dtype=torchlet.int64))
    with pytest.raises(RuntimeError, match=r"The shape of the 2D attn_mask is"):
        m(q, q, q, attn_mask=torchlet.zeros(3, 4))
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        m(q, q, q, is_causal=True)
    with pytest.raises(AssertionError, match="Expected key_padded_mask.shape"):
        m(q, q, q, key_padding_mask=torchlet.zeros(2, 5, dtype=torchlet.bool))


def test_mha_gradcheck():
    E, H = 4, 2
    q = torchlet.tensor(R.standard_normal((3, 2, E)), requires_grad=True)
    k = torchlet.tensor(R.standard_normal((4, 2, E)), requires_grad=True)
    w = torchlet.tensor(R.standard_normal((3 * E, E)) * 0.5, requires_grad=True)
    b = torchlet.tensor(R.standard_normal(3 * E), requires_grad=True)
    ow = torchlet.tensor(R.standard_normal((E, E)) * 0.5, requires_grad=True)
    bk = torchlet.tensor(R.standard_normal((1, 1, E)), requires_grad=True)
    kpm = torchlet.tensor(np.array([[False, True, False, False], [False, False, False, True]]))

    def f(q, k, w, b, ow, bk, nw):
        return F.multi_head_attention_forward(q, k, k, E, H, w, b, bk, bk, True, 0.0, ow, None,
                                              key_padding_mask=kpm, need_weights=nw)[0]
    assert gradcheck(lambda *a: f(*a, True), [q, k, w, b, ow, bk])
    assert gradcheck(lambda *a: f(*a, False), [q, k, w, b, ow, bk])


# ------------------------------------------------------------------ torch

def _load(tm, lm):
    lm.load_state_dict({k: torchlet.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})


def _pair(torch, x):
    return torch.tensor(x, requires_grad=True), torchlet.tensor(x, requires_grad=True)


def _close(a, b, tol=2e-5):
    np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=tol, atol=tol)


MHA_CASES = [
    dict(),
    dict(batch_first=True),
    dict(bias=False),
    dict(add_bias_kv=True),
    dict(add_zero_attn=True),
    dict(kdim=3, vdim=5),
    dict(add_bias_kv=True, add_zero_attn=True, batch_first=True),
]


@pytest.mark.parametrize("ctor", MHA_CASES)
@pytest.mark.parametrize("mask_kind", ["none", "bool2d", "float3d", "kpm_bool", "kpm_float+float2d", "causal"])
@pytest.mark.parametrize("need_weights,avg", [(True, True), (True, False), (False, True)])
def test_mha_matches_torch(ctor, mask_kind, need_weights, avg):
    torch = pytest.importorskip("torch")
    if mask_kind == "causal" and "kdim" in ctor:
        pytest.skip("self-attention needs kdim == vdim == embed_dim")
    E, H, L, S, N = 8, 2, 5, 6, 3
    tm = torch.nn.MultiheadAttention(E, H, **ctor)
    lm = nn.MultiheadAttention(E, H, **ctor)
    _load(tm, lm)
    bf = ctor.get("batch_first", False)
    shp = (lambda n, s, e: (n, s, e)) if bf else (lambda n, s, e: (s, n, e))
    kd, vd = ctor.get("kdim", E), ctor.get("vdim", E)
    self_attn = mask_kind == "causal"
    tq, lq = _pair(torch, _x(*shp(N, L if not self_attn else S, E)))
    tk, lk = (tq, lq) if self_attn else _pair(torch, _x(*shp(N, S, kd)))
    tv, lv = (tq, lq) if self_attn else _pair(torch, _x(*shp(N, S, vd)))
    Lq = S if self_attn else L
    kw = {}
    if mask_kind == "bool2d":
        m = R.random((Lq, S)) < 0.3
        m[:, 0] = False
        kw["attn_mask"] = m
    elif mask_kind == "float3d":
        kw["attn_mask"] = _x(N * H, Lq, S)
    elif mask_kind == "kpm_bool":
        m = np.zeros((N, S), bool)
        m[:, -2:] = True
        kw["key_padding_mask"] = m
    elif mask_kind == "kpm_float+float2d":
        kw["key_padding_mask"] = _x(N, S)
        kw["attn_mask"] = _x(Lq, S)
    elif mask_kind == "causal":
        kw["attn_mask"] = np.triu(np.ones((S, S), bool), 1)
        kw["is_causal"] = True
    tkw = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    lkw = {k: torchlet.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    for train in (False, True):
        tm.train(train)
        lm.train(train)
        to, tw = tm(tq, tk, tv, need_weights=need_weights, average_attn_weights=avg, **tkw)
        lo, lw = lm(lq, lk, lv, need_weights=need_weights, average_attn_weights=avg, **lkw)
        assert lo.shape == to.shape
        _close(to, lo)
        if need_weights:
            _close(tw, lw)
        else:
            assert lw is None
    go = _x(*to.shape)
    to.backward(torch.tensor(go))
    lo.backward(torchlet.tensor(go))
    for (n, tp), lp in zip(tm.named_parameters(), lm.parameters()):
        _close(tp.grad, lp.grad, 1e-4)
    for t, x in ((tq, lq), (tk, lk), (tv, lv)):
        _close(t.grad, x.grad, 1e-4)


def test_mha_unbatched_matches_torch():
    torch = pytest.importorskip("torch")
    tm, lm = torch.nn.MultiheadAttention(6, 3), nn.MultiheadAttention(6, 3)
    _load(tm, lm)
    q, k = _x(4, 6), _x(5, 6)
    m = _x(3, 4, 5)
    kpm = np.array([False, False, True, False, True])
    with pytest.warns(UserWarning, match="Support for mismatched key_padding_mask and attn_mask is deprecated"):
        to, tw = tm(torch.tensor(q), torch.tensor(k), torch.tensor(k), attn_mask=torch.tensor(m),
                    key_padding_mask=torch.tensor(kpm))
    with pytest.warns(UserWarning, match="Support for mismatched key_padding_mask and attn_mask is deprecated"):
        lo, lw = lm(torchlet.tensor(q), torchlet.tensor(k), torchlet.tensor(k), attn_mask=torchlet.tensor(m),
                    key_padding_mask=torchlet.tensor(kpm))
    _close(to, lo)
    _close(tw, lw)


def _run_both(torch, tm, lm, args_np, kwargs_np=None, train=False):
    kwargs_np = kwargs_np or {}
    tm.train(train)
    lm.train(train)
    targs = [torch.tensor(a, requires_grad=a.dtype != bool) for a in args_np]
    largs = [torchlet.tensor(a, requires_grad=a.dtype != bool) for a in args_np]
    tkw = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs_np.items()}
    lkw = {k: torchlet.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs_np.items()}
    to, lo = tm(*targs, **tkw), lm(*largs, **lkw)
    _close(to, lo, 1e-4)
    go = _x(*to.shape)
    to.backward(torch.tensor(go))
    lo.backward(torchlet.tensor(go))
    for (n, tp), (ln, lp) in zip(tm.named_parameters(), lm.named_parameters()):
        assert n == ln
        _close(tp.grad, lp.grad, 2e-4)
    for t, x in zip(targs, largs):
        if t.grad is not None:
            _close(t.grad, x.grad, 2e-4)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu", "callable"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_encoder_decoder_layers_match_torch(norm_first, activation, batch_first):
    torch = pytest.importorskip("torch")
    d, nh, ff, S, T, N = 8, 2, 16, 5, 4, 3
    act_t = torch.tanh if activation == "callable" else activation
    act_l = torchlet.tanh if activation == "callable" else activation
    kw = dict(dim_feedforward=ff, dropout=0.0, batch_first=batch_first, norm_first=norm_first)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tenc = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(d, nh, activation=act_t, **kw), 2,
                                           torch.nn.LayerNorm(d))
        lenc = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, nh, activation=act_l, **kw), 2, nn.LayerNorm(d))
    assert list(tenc.state_dict()) == list(lenc.state_dict())
    _load(tenc, lenc)
    src = _x(N, S, d) if batch_first else _x(S, N, d)
    kpm = np.zeros((N, S), bool)
    kpm[0, -1] = True
    for train in (False, True):
        _run_both(torch, tenc, lenc, [src], {"mask": np.triu(np.ones((S, S), bool), 1),
                                             "src_key_padding_mask": kpm}, train=train)
        _run_both(torch, tenc, lenc, [src], {"mask": torch.nn.Transformer.generate_square_subsequent_mask(S).numpy()},
                  train=train)
    tdl = torch.nn.TransformerDecoderLayer(d, nh, activation=act_t, **kw)
    ldl = nn.TransformerDecoderLayer(d, nh, activation=act_l, **kw)
    assert list(tdl.state_dict()) == list(ldl.state_dict())
    _load(tdl, ldl)
    tgt = _x(N, T, d) if batch_first else _x(T, N, d)
    tmask = nn.Transformer.generate_square_subsequent_mask(T).numpy()
    for train in (False, True):
        _run_both(torch, tdl, ldl, [tgt, src], {"tgt_mask": tmask, "memory_key_padding_mask": kpm,
                                                "tgt_is_causal": True}, train=train)


def test_transformer_matches_torch():
    torch = pytest.importorskip("torch")
    kw = dict(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=1, dim_feedforward=12, dropout=0.0)
    with pytest.warns(UserWarning, match="enable_nested_tensor is True, but self.use_nested_tensor is False"):
        tm = torch.nn.Transformer(**kw)
    with pytest.warns(UserWarning, match="enable_nested_tensor is True, but self.use_nested_tensor is False"):
        lm = nn.Transformer(**kw)
    assert list(tm.state_dict()) == list(lm.state_dict())
    _load(tm, lm)
    src, tgt = _x(6, 2, 8), _x(4, 2, 8)
    mask = nn.Transformer.generate_square_subsequent_mask(4).numpy()
    np.testing.assert_array_equal(mask, torch.nn.Transformer.generate_square_subsequent_mask(4).numpy())
    for train in (False, True):
        _run_both(torch, tm, lm, [src, tgt], {"tgt_mask": mask}, train=train)
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        lm(torchlet.zeros(6, 2, 8), torchlet.zeros(4, 3, 8))
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal to d_model"):
        lm(torchlet.zeros(6, 2, 8), torchlet.zeros(4, 2, 7))


def test_transformer_activation_error_and_unbatched():
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(4, 2, activation="tanh")
    layer = nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, dropout=0.0)
    x = torchlet.tensor(_x(3, 4))
    y = layer(x)
    assert y.shape == (3, 4)
    np.testing.assert_allclose(y.detach().numpy(), layer(x.unsqueeze(1)).squeeze(1).detach().numpy(), rtol=1e-5,
                               atol=1e-6)


def test_encoder_gradcheck_float64():
    layer = nn.TransformerEncoderLayer(4, 2, dim_feedforward=6, dropout=0.0, norm_first=True, dtype=torchlet.float64)
    x = torchlet.tensor(R.standard_normal((3, 2, 4)), requires_grad=True)
    assert gradcheck(lambda a: layer(a), [x])
