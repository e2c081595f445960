"""Attention (kernels/native/attention.c,
kernels/cpu/attention_kernel.c, docs/NN.md "Fused attention"):
scaled_dot_product_attention (fused or math path, chosen as PyTorch's CPU
sdp dispatch does), _scaled_dot_product_flash_attention_for_cpu and its
backward.

Forward and gradients against a float64 numpy reference always, against
torch when installed: odd lengths, T_q != T_k (causal: PyTorch's top-left
rule), key blocks beyond one tile (the online softmax), bool / float /
broadcast masks, fully masked rows, scale, grouped-query attention,
non-contiguous inputs, empty batches, float16 / bfloat16 / float64, thread
count independence, which path (grad_fn) runs, and PyTorch's errors."""
import numpy as np
import pytest

import torchlet as tl
import torchlet.nn.functional as F

from ops_helpers import needs_torch, torch

R = np.random.default_rng(606)
FUSED = "ScaledDotProductFlashAttentionForCpuBackward0"
FA = "scaled_dot_product_attention_flash_attention: "


def rn(*shape):
    return R.standard_normal(shape)


def bhte(B, H, T, E):
    """(B, H, T, E) data stored as (B, T, H, E): the seed's transposed views"""
    return np.ascontiguousarray(rn(B, T, H, E)).transpose(0, 2, 1, 3)


def tl_view(a, dtype=tl.float32, grad=True):
    """a torchlet leaf with a's values; 4-D ones stored as (B, T, H, E) like bhte's"""
    if a.ndim != 4:
        return tl.from_numpy(np.ascontiguousarray(a)).to(dtype).detach().requires_grad_(grad)
    base = np.ascontiguousarray(a.transpose(0, 2, 1, 3))
    return tl.from_numpy(base).to(dtype).transpose(1, 2).detach().requires_grad_(grad)


def np_attention(q, k, v, mask=None, causal=False, scale=None, g=None):
    """float64 reference: (out, lse, grads of q, k, v for the loss sum(out * g));
    grouped-query heads repeat k / v; fully masked rows give 0"""
    q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
    rep = q.shape[1] // k.shape[1]
    kk, vv = np.repeat(k, rep, axis=1), np.repeat(v, rep, axis=1)
    L, S, E = q.shape[2], k.shape[2], q.shape[3]
    sc = 1 / np.sqrt(E) if scale is None else scale
    s = q @ kk.transpose(0, 1, 3, 2) * sc
    if mask is not None:
        s = s + (np.where(mask, 0.0, -np.inf) if mask.dtype == bool else mask)
    if causal:
        s = np.where(np.tril(np.ones((L, S), bool)), s, -np.inf)
    m = s.max(-1, keepdims=True)
    dead = ~np.isfinite(m)
    e = np.exp(s - np.where(dead, 0, m))
    z = e.sum(-1, keepdims=True)
    p = np.where(dead, 0, e / np.where(dead, 1, z))
    out = p @ vv
    lse = np.where(dead, 0, np.log(np.where(dead, 1, z)) + np.where(dead, 0, m))[..., 0]
    if g is None:
        return out, lse
    dv = p.transpose(0, 1, 3, 2) @ g
    dp = g @ vv.transpose(0, 1, 3, 2)
    ds = p * (dp - (dp * p).sum(-1, keepdims=True))
    dq = ds @ kk * sc
    dk = ds.transpose(0, 1, 3, 2) @ q * sc
    B, Hk = k.shape[:2]
    fold = lambda t: t.reshape(B, Hk, rep, *t.shape[2:]).sum(2)  # noqa: E731
    return out, lse, dq, fold(dk), fold(dv)


def run_tl(q, k, v, g, dtype=tl.float32, **kw):
    ts = [tl_view(x, dtype) for x in (q, k, v)]
    m = kw.pop("attn_mask", None)
    if m is not None:
        m = tl.from_numpy(np.ascontiguousarray(m))
        if m.dtype != tl.bool:
            m = m.to(dtype)
    o = F.scaled_dot_product_attention(*ts, attn_mask=m, **kw)
    o.backward(tl.from_numpy(np.ascontiguousarray(g)).to(dtype))
    return o, [t.grad for t in ts]


def f64(t):
    return t.detach().to(tl.float64).numpy()


CASES = [  # B, Hq, Hk, L, S, E, causal
    (2, 3, 3, 5, 6, 4, False),
    (2, 3, 3, 5, 6, 4, True),
    (1, 2, 2, 1, 1, 8, False),
    (2, 2, 2, 7, 7, 8, True),
    (1, 2, 2, 33, 33, 16, True),
    (1, 1, 1, 129, 129, 8, True),
    (2, 2, 2, 7, 11, 8, True),     # T_q < T_k: top-left causal
    (2, 2, 2, 11, 7, 8, True),     # T_q > T_k: rows past T_k see every key
    (1, 2, 2, 33, 600, 16, False),  # three key blocks: the online rescale
    (1, 1, 1, 300, 300, 8, True),
    (2, 4, 2, 7, 9, 8, False),     # grouped-query attention
    (1, 6, 2, 9, 9, 4, True),
]


@pytest.mark.parametrize("B,Hq,Hk,L,S,E,causal", CASES)
def test_fused_against_numpy(B, Hq, Hk, L, S, E, causal):
    q, k, v, g = bhte(B, Hq, L, E), bhte(B, Hk, S, E), bhte(B, Hk, S, E), rn(B, Hq, L, E)
    o, grads = run_tl(q, k, v, g, is_causal=causal, enable_gqa=Hq != Hk)
    assert type(o.grad_fn).__name__ == FUSED
    ref = np_attention(q, k, v, causal=causal, g=g)
    np.testing.assert_allclose(f64(o), ref[0], rtol=1e-5, atol=2e-6)
    for got, want in zip(grads, ref[2:]):
        np.testing.assert_allclose(f64(got), want, rtol=1e-4, atol=1e-5)


def test_fused_float64_matches_numpy_tightly():
    q, k, v, g = bhte(2, 2, 9, 5), bhte(2, 2, 300, 5), bhte(2, 2, 300, 5), rn(2, 2, 9, 5)
    o, grads = run_tl(q, k, v, g, dtype=tl.float64, scale=0.7)
    ref = np_attention(q, k, v, scale=0.7, g=g)
    np.testing.assert_allclose(o.detach().numpy(), ref[0], rtol=1e-12, atol=1e-13)
    for got, want in zip(grads, ref[2:]):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("kind", ["bool2", "bool4", "float2", "float4", "rows"])
def test_fused_masks(kind):
    B, H, L, S, E = 2, 2, 7, 9, 8
    q, k, v, g = bhte(B, H, L, E), bhte(B, H, S, E), bhte(B, H, S, E), rn(B, H, L, E)
    if kind == "bool2":
        m = R.random((L, S)) > 0.3
        m[:, 0] = True
    elif kind == "bool4":
        m = R.random((B, 1, 1, S)) > 0.3
        m[..., 0] = True
    elif kind == "float2":
        m = rn(L, S)
    elif kind == "float4":
        m = rn(1, H, L, 1)
    else:  # fully masked rows give 0 (and zero gradients), as PyTorch's kernel
        m = rn(L, S)
        m[2] = -np.inf
        m[5, :4] = -np.inf
    o, grads = run_tl(q, k, v, g, attn_mask=m)
    assert type(o.grad_fn).__name__ == FUSED
    ref = np_attention(q, k, v, mask=m, g=g)
    np.testing.assert_allclose(f64(o), ref[0], rtol=1e-5, atol=2e-6)
    for got, want in zip(grads, ref[2:]):
        np.testing.assert_allclose(f64(got), want, rtol=1e-4, atol=1e-5)
    if kind == "rows":
        assert not np.isnan(f64(o)).any() and (f64(o)[:, :, 2] == 0).all()
        assert (f64(grads[0])[:, :, 2] == 0).all()


def test_fused_op_results_and_layout():
    """(output, logsumexp): output (B, H, L, E) stored as (B, L, H, E), lse
    (B, H, L) float32 stored as (B, L, H), as PyTorch; the seed's
    transpose(1, 2).reshape after attention is then a view"""
    B, H, L, S, E = 2, 3, 5, 6, 4
    q, k, v = bhte(B, H, L, E), bhte(B, H, S, E), bhte(B, H, S, E)
    ts = [tl_view(x, grad=False) for x in (q, k, v)]
    o, lse = tl._scaled_dot_product_flash_attention_for_cpu(*ts, 0.0, True)
    assert o.shape == (B, H, L, E) and o.stride() == (L * H * E, E, H * E, 1)
    assert lse.shape == (B, H, L) and lse.dtype == tl.float32 and lse.stride() == (L * H, 1, H)
    ref = np_attention(q, k, v, causal=True)
    np.testing.assert_allclose(f64(lse), ref[1], rtol=1e-5, atol=1e-5)
    y = o.transpose(1, 2).reshape(B, L, H * E)
    assert y.data_ptr() == o.data_ptr()
    # float16 / bfloat16 compute in float32; logsumexp stays float32
    for dt, tol in ((tl.float16, 3e-3), (tl.bfloat16, 3e-2)):
        o2, l2 = tl._scaled_dot_product_flash_attention_for_cpu(*[t.to(dt) for t in ts], 0.0, True)
        assert o2.dtype == dt and l2.dtype == tl.float32
        np.testing.assert_allclose(f64(o2), ref[0], atol=tol * 4)
    o3, l3 = tl._scaled_dot_product_flash_attention_for_cpu(*[t.to(tl.float64) for t in ts], 0.0, True)
    assert o3.dtype == tl.float64 and l3.dtype == tl.float64


def test_fused_backward_op_directly():
    B, H, L, S, E = 2, 2, 7, 5, 4
    q, k, v, g = bhte(B, H, L, E), bhte(B, H, S, E), bhte(B, H, S, E), rn(B, H, L, E)
    ts = [tl_view(x, tl.float64, grad=False) for x in (q, k, v)]
    o, lse = tl._scaled_dot_product_flash_attention_for_cpu(*ts, 0.0, True, scale=0.3)
    gq, gk, gv = tl._scaled_dot_product_flash_attention_for_cpu_backward(
        tl.from_numpy(g), *ts, o, lse, 0.0, True, scale=0.3)
    ref = np_attention(q, k, v, causal=True, scale=0.3, g=g)
    for got, want in zip((gq, gk, gv), ref[2:]):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-11, atol=1e-12)
    assert gk.stride() == (S * H * E, E, H * E, 1)


def test_non_contiguous_inputs():
    """stepped views along T and contiguous (B, H, T, E) inputs go through the
    fused kernel by strides; a last dim with stride != 1 takes the math path
    (PyTorch's rule), and the direct op copies it"""
    B, H, L, E = 2, 2, 14, 6
    q, k, v, g = rn(B, H, L, E), rn(B, H, L, E), rn(B, H, L, E), rn(B, H, L // 2, E)
    ts = [tl.from_numpy(x).to(tl.float32)[:, :, ::2].detach().requires_grad_() for x in (q, k, v)]
    o = F.scaled_dot_product_attention(*ts, is_causal=True)
    assert type(o.grad_fn).__name__ == FUSED
    o.backward(tl.from_numpy(g).to(tl.float32))
    ref = np_attention(q[:, :, ::2], k[:, :, ::2], v[:, :, ::2], causal=True, g=g)
    np.testing.assert_allclose(f64(o), ref[0], rtol=1e-5, atol=2e-6)
    for t, want in zip(ts, ref[2:]):
        np.testing.assert_allclose(f64(t.grad), want, rtol=1e-4, atol=1e-5)
    qt = tl.from_numpy(np.ascontiguousarray(q.transpose(0, 1, 3, 2))).transpose(2, 3)  # last-dim stride != 1
    kt = tl.from_numpy(k)
    o = F.scaled_dot_product_attention(qt.requires_grad_(), kt, kt)
    assert type(o.grad_fn).__name__ != FUSED
    o2, _ = tl._scaled_dot_product_flash_attention_for_cpu(qt.detach(), kt, kt)
    np.testing.assert_allclose(o2.numpy(), np_attention(q, k, k)[0], rtol=1e-12, atol=1e-12)


def test_empty_batch_and_zero_lengths():
    z = tl.zeros(0, 2, 5, 4, requires_grad=True)
    o = F.scaled_dot_product_attention(z, z, z)
    assert o.shape == (0, 2, 5, 4) and type(o.grad_fn).__name__ == FUSED
    o.sum().backward()
    assert z.grad.shape == (0, 2, 5, 4)
    # zero-length sequences take the math path (PyTorch's choice); no crash either way
    q = tl.zeros(1, 2, 0, 4)
    k = tl.ones(1, 2, 3, 4)
    assert F.scaled_dot_product_attention(q, k, k).shape == (1, 2, 0, 4)
    o, lse = tl._scaled_dot_product_flash_attention_for_cpu(k, q, q)
    assert (o.numpy() == 0).all() and (lse.numpy() == 0).all()


def test_independent_of_thread_count():
    B, H, L, E = 3, 2, 70, 8
    q, k, v, g = bhte(B, H, L, E), bhte(B, H, L, E), bhte(B, H, L, E), rn(B, H, L, E)
    old = tl.get_num_threads()
    res = []
    try:
        for n in (1, 2, 3):
            tl.set_num_threads(n)
            o, grads = run_tl(q, k, v, g, is_causal=True)
            res.append([o.detach().numpy()] + [t.numpy() for t in grads])
    finally:
        tl.set_num_threads(old)
    for other in res[1:]:
        for a, b in zip(res[0], other):
            np.testing.assert_array_equal(a, b)


def path(**kw):
    q = kw.pop("q", tl.zeros(2, 2, 3, 4, requires_grad=True))
    k = kw.pop("k", tl.zeros(2, 2, 5, 4))
    v = kw.pop("v", k)
    return type(F.scaled_dot_product_attention(q, k, v, **kw).grad_fn).__name__


def test_dispatch_follows_pytorch():
    assert path() == FUSED
    assert path(attn_mask=tl.zeros(3, 5), is_causal=True) == FUSED  # both: fused (PyTorch too)
    assert path(attn_mask=tl.zeros(1, 1, 3, 1)) == FUSED
    assert path(dropout_p=0.5) != FUSED
    assert path(attn_mask=tl.zeros(2, 3, 5)) != FUSED  # 3-D mask
    assert path(attn_mask=tl.zeros(3, 5, requires_grad=True)) != FUSED
    assert path(q=tl.zeros(2, 3, 4, requires_grad=True), k=tl.zeros(2, 5, 4)) != FUSED  # 3-D inputs
    assert path(k=tl.zeros(2, 1, 5, 4)) != FUSED  # fewer kv heads without enable_gqa: math broadcasting
    assert path(k=tl.zeros(2, 1, 5, 4), enable_gqa=True) == FUSED
    assert path(v=tl.zeros(2, 2, 5, 3)) != FUSED  # value head dim differs


def test_math_path_values():
    """the paths PyTorch also runs as math: 3-D inputs, a value head dim of its own"""
    q, k, v, g = rn(2, 5, 4), rn(2, 7, 4), rn(2, 7, 3), rn(2, 5, 3)
    o, grads = run_tl(q, k, v, g)
    ref = np_attention(q[:, None], k[:, None], v[:, None])[0][:, 0]
    np.testing.assert_allclose(f64(o), ref, rtol=1e-5, atol=2e-6)


def test_math_path_fully_masked_rows():
    """PyTorch's math path (_safe_softmax): rows whose keys are all masked give
    0 and zero gradients, no NaN (3-D inputs take the math path)"""
    q, k, v, g = rn(2, 5, 4), rn(2, 6, 4), rn(2, 6, 4), rn(2, 5, 4)
    m = rn(5, 6)
    m[1] = -np.inf
    m[3, 2:] = -np.inf
    o, grads = run_tl(q, k, v, g, dtype=tl.float64, attn_mask=m)
    assert type(o.grad_fn).__name__ != FUSED
    ref = np_attention(q[:, None], k[:, None], v[:, None], mask=m, g=g[:, None])
    np.testing.assert_allclose(o.detach().numpy(), ref[0][:, 0], rtol=1e-12, atol=1e-13)
    for got, want in zip(grads, ref[2:]):
        np.testing.assert_allclose(got.numpy(), want[:, 0], rtol=1e-11, atol=1e-12)
    assert (o.detach().numpy()[:, 1] == 0).all()
    mb = np.ones((5, 6), bool)
    mb[4] = False
    o = F.scaled_dot_product_attention(*[tl.from_numpy(x) for x in (q, k, v)], attn_mask=tl.from_numpy(mb))
    assert (o.numpy()[:, 4] == 0).all() and not np.isnan(o.numpy()).any()


@needs_torch
@pytest.mark.parametrize("B,Hq,Hk,L,S,E,causal", CASES[:9] + CASES[10:])
def test_against_torch(B, Hq, Hk, L, S, E, causal):
    q, k, v, g = bhte(B, Hq, L, E), bhte(B, Hk, S, E), bhte(B, Hk, S, E), rn(B, Hq, L, E)
    o, grads = run_tl(q, k, v, g, is_causal=causal, enable_gqa=Hq != Hk)
    pts = [torch.from_numpy(np.ascontiguousarray(x.transpose(0, 2, 1, 3))).float().transpose(1, 2).requires_grad_()
           for x in (q, k, v)]
    po = torch.nn.functional.scaled_dot_product_attention(*pts, is_causal=causal, enable_gqa=Hq != Hk)
    po.backward(torch.from_numpy(g).float())
    assert type(o.grad_fn).__name__ == type(po.grad_fn).__name__
    assert o.stride() == po.stride()
    np.testing.assert_allclose(o.detach().numpy(), po.detach().numpy(), rtol=1e-5, atol=2e-6)
    for t, p in zip(grads, pts):
        np.testing.assert_allclose(t.numpy(), p.grad.numpy(), rtol=1e-4, atol=1e-5)
        assert t.stride() == p.grad.stride()
    _, lse = tl._scaled_dot_product_flash_attention_for_cpu(*[tl_view(x, grad=False) for x in (q, k, v)],
                                                            0.0, causal)
    _, plse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(
        *[torch.from_numpy(x).float() for x in (q, k, v)], 0.0, causal)
    np.testing.assert_allclose(lse.numpy(), plse.numpy(), rtol=1e-5, atol=1e-5)


@needs_torch
def test_masks_against_torch():
    q, k, v = rn(2, 2, 7, 8), rn(2, 2, 9, 8), rn(2, 2, 9, 8)
    fm = rn(7, 9)
    fm[3] = -np.inf
    for m in (R.random((2, 1, 7, 9)) > 0.4, fm, rn(1, 2, 1, 9)):
        o = F.scaled_dot_product_attention(*[tl.from_numpy(x) for x in (q, k, v)], attn_mask=tl.from_numpy(m))
        po = torch.nn.functional.scaled_dot_product_attention(*[torch.from_numpy(x) for x in (q, k, v)],
                                                              attn_mask=torch.from_numpy(m))
        np.testing.assert_allclose(o.numpy(), po.numpy(), rtol=1e-10, atol=1e-12)


def err(exc, match, fn, *a, **kw):
    with pytest.raises(exc, match=match):
        fn(*a, **kw)


def test_errors_fused_op():
    op = tl._scaled_dot_product_flash_attention_for_cpu
    q, k = tl.zeros(2, 2, 3, 4), tl.zeros(2, 2, 5, 4)
    err(RuntimeError, FA + r"Accept only 4 dims inputs shape of \{B, H, T, K\}", op, q[0], k[0], k[0])
    err(RuntimeError, FA + "Currently do not support dropout > 0", op, q, k, k, 0.1)
    err(RuntimeError, FA + "Expected data type in FP32, FP64, BF16, FP16, but got Long instead.",
        op, q.to(tl.int64), k.to(tl.int64), k.to(tl.int64))
    err(RuntimeError, "expected scalar type Float but found Double", op, q, k.to(tl.float64), k.to(tl.float64))
    err(RuntimeError, FA + "Q/K/V should have the same head size", op, q, k[..., :3], k)
    err(RuntimeError, FA + r"Attention mask dim in \{2, 4\}", op, q, k, k, attn_mask=tl.zeros(2, 3, 5))
    err(RuntimeError, FA + "Attention mask is the same data type as query", op, q, k, k,
        attn_mask=tl.ones(3, 5, dtype=tl.bool))
    err(RuntimeError, "must match the existing size", op, q, k, k, attn_mask=tl.zeros(4, 5))
    # PyTorch reads out of bounds for these; torchlet refuses
    err(RuntimeError, "key and value must have the batch size of query", op, q, k[:1], k[:1])
    err(RuntimeError, "key and value must have the batch size of query", op, q, k, k[:, :, :2])
    err(RuntimeError, "Number of heads in key and value must divide", op, tl.zeros(2, 3, 3, 4), k, k)


def test_errors_sdpa():
    q, k = tl.zeros(2, 2, 3, 4), tl.zeros(2, 2, 5, 4)
    err(RuntimeError, "Expected query, key, and value to have the same dtype, but got query.dtype: float "
        "key.dtype: double and value.dtype: double instead.", F.scaled_dot_product_attention, q, k.to(tl.float64),
        k.to(tl.float64))
    err(RuntimeError, "Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: 1 "
        "key.dim: 2 and value.dim: 2 instead.", F.scaled_dot_product_attention, q[0, 0, 0], k[0, 0], k[0, 0])
    err(RuntimeError, "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
        "attn_mask.dtype: long int and  query.dtype: float instead.", F.scaled_dot_product_attention, q, k, k,
        attn_mask=tl.zeros(3, 5, dtype=tl.int64))
    err(RuntimeError, "Expected attn_mask dtype to be bool or float", F.scaled_dot_product_attention, q, k, k,
        attn_mask=tl.zeros(3, 5, dtype=tl.float64))
    err(RuntimeError, "Number of heads in key and value must divide the number of heads in ",
        F.scaled_dot_product_attention, tl.zeros(2, 3, 3, 4), k, k, enable_gqa=True)
    err(RuntimeError, "Explicit attn_mask should not be set when is_causal=True", F.scaled_dot_product_attention,
        q[0], k[0], k[0], attn_mask=tl.zeros(3, 5), is_causal=True)


@needs_torch
def test_error_messages_match_torch():
    op, pop = tl._scaled_dot_product_flash_attention_for_cpu, torch.ops.aten._scaled_dot_product_flash_attention_for_cpu
    calls = [
        lambda m, z: m(z(2, 3, 4), z(2, 5, 4), z(2, 5, 4)),
        lambda m, z: m(z(2, 2, 3, 4), z(2, 2, 5, 4), z(2, 2, 5, 4), 0.2),
        lambda m, z: m(z(2, 2, 3, 4), z(2, 2, 5, 3), z(2, 2, 5, 4)),
        lambda m, z: m(z(2, 2, 3, 4), z(2, 2, 5, 4), z(2, 2, 5, 4), attn_mask=z(2, 3, 5)),
    ]
    for c in calls:
        with pytest.raises(RuntimeError) as a:
            c(op, tl.zeros)
        with pytest.raises(RuntimeError) as b:
            c(pop, torch.zeros)
        assert str(a.value) == str(b.value).split("\n")[0]
