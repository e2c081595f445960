"""var / std / var_mean / std_mean, logsumexp, any / all, max / min (whole and
.dim), the whole-tensor prod and linalg.vector_norm on "cuda" tensors end to
end, without a GPU: the dispatcher's CUDA key (PyTorch's `CPU, CUDA:` lines),
the host side, the runtime's program load and cuLaunchKernel on the fake
libcuda, which runs the host-shim build of the reduction kernels
(test_cuda_fake_reduce_blas.py's harness); autograd through the generated
nodes, whose backward formulas run on the device's pointwise kernels."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import test_cuda_fake_reduce_blas as base  # noqa: E402

COMMON, _run = base.COMMON, base._run
libs = base.libs   # the fixture: the fake libcuda and the shim build

STATS = COMMON + textwrap.dedent("""
    import warnings
    rng = np.random.default_rng(0)
    a = tl.from_numpy(rng.standard_normal((37, 129)).astype(np.float32))
    ca = a.to("cuda")
    h = a.to(tl.float16)
    ch = h.to("cuda")
    d = a.to(tl.float64)
    cd = d.to("cuda")
    # var / std / var_mean / std_mean: dims, correction, keepdim, every floating dtype, out=
    for x, cx, tol in ((a, ca, 1e-5), (d, cd, 1e-12), (h, ch, 2e-3)):
        close(cx.var(), x.var(), rtol=tol)
        close(cx.std(1), x.std(1), rtol=tol)
        close(tl.var(cx, [0], correction=0, keepdim=True), tl.var(x, [0], correction=0, keepdim=True), rtol=tol)
        close(tl.std(cx, None, correction=2.5), tl.std(x, None, correction=2.5), rtol=tol)
        for fn in (tl.var_mean, tl.std_mean):
            gv, gm = fn(cx, 1)
            wv, wm = fn(x, 1)
            close(gv, wv, rtol=tol)
            close(gm, wm, rtol=tol)
        gv, gm = tl.var_mean(cx, [0, 1], correction=0, keepdim=True)
        wv, wm = tl.var_mean(x, [0, 1], correction=0, keepdim=True)
        close(gv, wv, rtol=tol)
        close(gm, wm, rtol=tol)
    big = tl.from_numpy((rng.standard_normal(70001) + 3).astype(np.float32))
    close(big.to("cuda").var(), big.var(), rtol=1e-4)   # two passes: Chan's merge of the partials
    close(tl.std_mean(big.to("cuda"))[1], tl.std_mean(big)[1], rtol=1e-4)
    tall = tl.from_numpy(rng.standard_normal((50, 1500)).astype(np.float32))
    close(tall.to("cuda").var(0), tall.var(0))   # a thread per output
    o = tl.empty([129], dtype=tl.float32, device="cuda")
    tl.var(ca, 0, out=o)
    close(o, a.var(0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        close(tl.empty([0, 3], device="cuda").var(0), tl.full([3], float("nan")))
        v1, m1 = tl.var_mean(tl.empty([0, 3], device="cuda"), 0)
        close(v1, tl.full([3], float("nan")))
        close(m1, tl.full([3], float("nan")))
    try:
        ca.to(tl.int64).var()
    except RuntimeError as e:
        assert "std and var only support floating point and complex dtypes" in str(e), str(e)
    else:
        raise AssertionError("integer var was accepted")
    # logsumexp: rows with -inf, +inf and NaN, integers promote to the default dtype, half
    s = a.clone()
    s[0] = float("-inf")
    s[1, 3] = float("inf")
    s[2, 5] = float("nan")
    close(tl.logsumexp(s.to("cuda"), 1), tl.logsumexp(s, 1))
    close(tl.logsumexp(ca, [0, 1], keepdim=True), tl.logsumexp(a, [0, 1], keepdim=True))
    close(tl.logsumexp(ch, 0), tl.logsumexp(h, 0), rtol=2e-3)
    i = tl.from_numpy(rng.integers(-5, 5, (7, 9)).astype(np.int32))
    close(tl.logsumexp(i.to("cuda"), 1), tl.logsumexp(i, 1))
    close(tl.logsumexp(big.to("cuda"), 0), tl.logsumexp(big, 0))
    close(tl.logsumexp(tl.empty([0, 3], device="cuda"), 0), tl.logsumexp(tl.empty([0, 3]), 0))
    # any / all: dims, None and [], uint8 keeps uint8, NaN counts as true
    f = a.clone()
    f[f.abs() < 1] = 0
    f[3, 4] = float("nan")
    cf = f.to("cuda")
    for fn in (tl.any, tl.all):
        close(fn(cf), fn(f))
        close(fn(cf, 1), fn(f, 1))
        close(fn(cf, [0, 1], keepdim=True), fn(f, [0, 1], keepdim=True))
        close(fn(cf, []), fn(f, []))
        u = (f > 0).to(tl.uint8)
        close(fn(u.to("cuda"), 0), fn(u, 0))
        close(fn(tl.empty([0, 3], device="cuda"), 0), fn(tl.empty([0, 3]), 0))
    # max / min: whole tensor and .dim (values and indices in one pass), NaN and ties, out=
    t = tl.from_numpy(rng.integers(-3, 3, (37, 129)).astype(np.float32))
    t[4, 7] = float("nan")
    ct = t.to("cuda")
    for fn in (tl.max, tl.min):
        close(fn(ct), fn(t))
        close(fn(ca), fn(a))
        for dim, kd in ((1, False), (0, True), (-1, True)):
            gv, gi = fn(ct, dim, kd)
            wv, wi = fn(t, dim, kd)
            close(gv, wv)
            close(gi, wi)
        gv, gi = fn(tall.to("cuda"), 0)
        close(gv, fn(tall, 0)[0])
        close(gi, fn(tall, 0)[1])
        iv = tl.empty([0], dtype=tl.float32, device="cuda")
        ii = tl.empty([0], dtype=tl.int64, device="cuda")
        fn(ct, 1, out=(iv, ii))
        close(iv, fn(t, 1)[0])
        close(ii, fn(t, 1)[1])
        close(fn(i.to("cuda"), 0)[1], fn(i, 0)[1])
    try:
        tl.empty([0], device="cuda").max()
    except RuntimeError as e:
        assert "Expected reduction dim to be specified for input.numel() == 0" in str(e), str(e)
    else:
        raise AssertionError("max of an empty tensor was accepted")
    # prod(): every element, dtype=, integers wrap in int64
    close(ca[:4].prod(), a[:4].prod(), rtol=1e-5)
    close(tl.prod(i.to("cuda")), tl.prod(i))
    close(tl.prod(ch[:2, :8], dtype=tl.float64), tl.prod(h[:2, :8], dtype=tl.float64), rtol=1e-6)
    # linalg.vector_norm: each order, dims, dtype=
    fz = f.clone()
    fz[3, 4] = 0
    for ordv in (2, 1, float("inf"), float("-inf"), 0, 3, 0.5, -1.5):
        close(tl.linalg.vector_norm(fz.to("cuda"), ordv), tl.linalg.vector_norm(fz, ordv), rtol=1e-5)
        close(tl.linalg.vector_norm(ca, ordv, 1, True), tl.linalg.vector_norm(a, ordv, 1, True), rtol=1e-5)
    close(tl.linalg.vector_norm(ch, 2, [0]), tl.linalg.vector_norm(h, 2, [0]), rtol=2e-3)
    close(tl.linalg.vector_norm(ca, 2, dtype=tl.float64), tl.linalg.vector_norm(a, 2, dtype=tl.float64))
    close(tl.linalg.vector_norm(cf, float("inf"), 1), tl.linalg.vector_norm(f, float("inf"), 1))
    # autograd through the generated nodes (backward formulas on the device's pointwise kernels; std's
    # backward masks zero deviations with masked_fill, which has no CUDA kernel here)
    for fn in (lambda x: tl.var(x, 1), lambda x: tl.var(x), lambda x: tl.logsumexp(x, 1),
               lambda x: tl.linalg.vector_norm(x, 2, 1), lambda x: tl.var_mean(x, 1)[0] + tl.var_mean(x, 1)[1]):
        xc = ca.clone().requires_grad_()
        g = tl.from_numpy(rng.standard_normal(tuple(fn(a).shape)).astype(np.float32))
        fn(xc).backward(g.to("cuda"))
        xr = a.clone().requires_grad_()
        fn(xr).backward(g)
        close(xc.grad, xr.grad, rtol=1e-4)
    assert "reduce" in compiled, compiled
    print("STATS OK")
""")


#: the backward formulas' pointwise programs beside the reductions and copies
OPS = ["reduce", "copy", "mul", "sub", "div", "add", "exp", "sqrt", "where", "eq", "ne"]


def test_stats_reductions_on_fake_cuda(libs, tmp_path):
    assert "STATS OK" in _run(STATS, libs, tmp_path, SHIM_OPS=json.dumps(OPS))


#: the OpInfos of the operators these kernels serve (every real dtype, forward; complex ones have no CUDA
#: kernels here)
OPINFOS = ["var", "std", "var_mean", "std_mean", "var.unbiased", "std.unbiased", "var_mean.unbiased",
           "std_mean.unbiased", "logsumexp", "max.reduction_with_dim", "max.reduction_no_dim",
           "min.reduction_with_dim", "min.reduction_no_dim", "prod", "any", "all", "linalg.vector_norm", "nansum",
           "aminmax", "count_nonzero"]

OPINFO = COMMON + textwrap.dedent("""
    sys.path.insert(0, os.path.join(os.getcwd(), "tests", "opinfo"))
    import test_opinfo_samples as M
    to_tl, to_np, callable_for = M.to_tl, M.to_np, M.callable_for
    seen = []

    def on_cuda(x, requires_grad=False):   # every input tensor of a sample goes to the device
        t = to_tl(x, requires_grad)
        return t.to("cuda") if isinstance(t, tl.Tensor) else t

    def checked(op):
        fn = callable_for(op)
        def run(*a, **k):
            r = fn(*a, **k)
            for t in (r if isinstance(r, (tuple, list)) else [r]):
                if isinstance(t, tl.Tensor):
                    assert t.device.type == "cuda", (op.name, t.device)
                    seen.append(1)
            return r
        return run

    M.to_tl = on_cuda
    M.CDTYPES = {}   # complex inputs have no CUDA reduction kernels here
    M.to_np = lambda x: to_np(x.cpu() if isinstance(x, tl.Tensor) else x)
    M.callable_for = checked
    names = set(json.loads(os.environ["OPINFOS"]))
    passed = total = 0
    bad = []
    for op in M.cpu_opinfos():
        if M._id(op) not in names:
            continue
        names.discard(M._id(op))
        (p, n), _, b = M.check_op(op, grad=False)
        passed, total, bad = passed + p, total + n, bad + b
    assert not names, names
    print("OPINFO", passed, total, len(seen))
    print(chr(10).join(bad[:40]))
""")


def test_opinfo_samples_on_fake_cuda(libs, tmp_path):
    """PyTorch's OpInfo samples of these operators with every input on the
    device, against PyTorch's CPU results (tests/opinfo's comparison)"""
    pytest.importorskip("torch")
    pytest.importorskip("expecttest")
    out = _run(OPINFO, libs, tmp_path, SHIM_OPS=json.dumps(OPS), OPINFOS=json.dumps(OPINFOS))
    line = next(x for x in out.splitlines() if x.startswith("OPINFO"))
    passed, total, on_device = map(int, line.split()[1:])
    print(line)
    assert total > 2000 and on_device >= passed, line
    assert passed >= 0.99 * total, out[-4000:]
