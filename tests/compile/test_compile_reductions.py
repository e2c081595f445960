"""Row kernels: a reduction over the last dimension with its pointwise
prologue and its broadcast-back epilogue in one loop nest (RMSNorm,
softmax, log_softmax, layer_norm), against eager within its tolerance, on
odd widths, one row, many rows, float64, keepdim=False, NaN rows and an
empty last dimension."""
import numpy as np
import pytest

import torchlet as torch
import torchlet.nn.functional as F
from torchlet._compile.fusion import Group


def rms(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w


def softmax_of_product(x, w):
    return torch.softmax(x * w, -1)


def log_softmax(x, w):
    return F.log_softmax(x + w, -1)


def layer_norm(x, w):
    return F.layer_norm(x, (x.shape[-1],), w, w)


def swiglu(x, w):
    return F.silu(x) * w


FNS = [rms, softmax_of_product, log_softmax, layer_norm, swiglu]


def _close(a, b, dt):
    tol = 2e-6 if dt is torch.float32 else 1e-12
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=tol * 10, atol=tol)


@pytest.mark.parametrize("fn", FNS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("shape", [(1, 1), (3, 7), (2, 3, 1000), (5, 2049)])
@pytest.mark.parametrize("dt", [torch.float32, torch.float64], ids=["f32", "f64"])
def test_row_kernels_match_eager(fn, shape, dt):
    x = torch.randn(shape, dtype=dt)
    w = torch.randn(shape[-1], dtype=dt)
    cf = torch.compile(fn)
    with torch.no_grad():
        got = cf(x, w)
        if fn is layer_norm:    # against numpy: the decomposition is PyTorch's formula
            xn, wn = x.numpy().astype(np.float64), w.numpy().astype(np.float64)
            mu = xn.mean(-1, keepdims=True)
            var = ((xn - mu) ** 2).mean(-1, keepdims=True)
            want = torch.from_numpy(((xn - mu) / np.sqrt(var + 1e-5) * wn + wn).astype(x.numpy().dtype))
        else:
            want = fn(x, w)
        _close(got, want, dt)


def layer_norm_in_context(x, w):
    return F.layer_norm(x * 2, (x.shape[-1],), w, w) + 1


@pytest.mark.parametrize("fn", [rms, softmax_of_product, layer_norm_in_context], ids=lambda f: f.__name__)
def test_one_kernel_per_normalization(fn):
    cf = torch.compile(fn)
    with torch.no_grad():
        cf(torch.randn(8, 64), torch.randn(64))
    plan = cf.last_entry.plan
    groups = [s for s in plan.steps if isinstance(s, Group)]
    assert len(groups) == 1 and plan.kernel_count() == 1, plan.steps


def test_a_lone_decomposition_runs_its_operator():
    # layer_norm alone: nothing to fuse it with, so eager's kernel runs it
    cf = torch.compile(layer_norm)
    x, w = torch.randn(8, 64), torch.randn(64)
    with torch.no_grad():
        _close(cf(x, w), layer_norm(x, w), torch.float32)
    steps = cf.last_entry.plan.steps
    assert len(steps) == 1 and str(steps[0].node.op) == "aten.native_layer_norm.default"


def test_reductions_keepdim_false_and_outputs():
    def f(x):
        s = (x * 2).sum(-1)
        m = x.amax(-1)
        return s, m, (x - x.amin(-1, keepdim=True)).exp()

    x = torch.randn(6, 50)
    with torch.no_grad():
        for a, b in zip(torch.compile(f)(x), f(x)):
            _close(a, b, torch.float32)


def test_nan_propagates_through_amax_and_softmax():
    x = torch.randn(3, 40)
    x[1, 17] = float("nan")
    with torch.no_grad():
        got = torch.compile(lambda t: torch.softmax(t * 1.5, -1))(x).numpy()
    assert np.isnan(got[1]).all() and not np.isnan(got[[0, 2]]).any()


def test_empty_rows_and_empty_last_dim():
    for shape in [(0, 16), (4, 0)]:
        x = torch.randn(shape)

        def f(t):
            return (t * 2).sum(-1, keepdim=True) + 1

        with torch.no_grad():
            got, want = torch.compile(f)(x), f(x)
        assert tuple(got.shape) == tuple(want.shape)
        _close(got, want, torch.float32)


def test_new_batch_sizes_reuse_the_kernel():
    cf = torch.compile(softmax_of_product)
    w = torch.randn(96)
    with torch.no_grad():
        for b in (2, 7, 130):     # (a size of 1 is its own key, as in PyTorch)
            x = torch.randn(b, 96)
            _close(cf(x, w), softmax_of_product(x, w), torch.float32)
    assert len(cf._keys) == 1


def test_rows_run_in_parallel():
    torch.set_num_threads(2)
    try:
        x, w = torch.randn(4096, 100), torch.randn(100)
        with torch.no_grad():
            _close(torch.compile(rms)(x, w), rms(x, w), torch.float32)
    finally:
        torch.set_num_threads(1)


@pytest.mark.parametrize("shape", [(5, 7), (3, 4, 33), (600, 16), (0, 6)])
def test_column_sums_fuse_into_the_row_kernel(shape):
    def f(x, w):
        y = (x * w).exp()
        dims = list(range(x.dim() - 1))
        return y * 2, y.sum(dims), (x + 1).mean(dims, keepdim=True)

    torch.set_num_threads(2)
    try:
        x, w = torch.randn(shape, dtype=torch.float64), torch.randn(shape[-1], dtype=torch.float64)
        cf = torch.compile(f)
        with torch.no_grad():
            got, want = cf(x, w), f(x, w)
        for a, b in zip(got, want):
            assert tuple(a.shape) == tuple(b.shape)
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12, equal_nan=True)
        groups = [s for s in cf.last_entry.plan.steps if isinstance(s, Group)]
        assert len(groups) == 1 and len(groups[0].columns) == 2
    finally:
        torch.set_num_threads(1)


@pytest.mark.parametrize("kind", ["amax", "amin"])
@pytest.mark.parametrize("width", [5, 31, 32, 33, 256, 257, 1000])
@pytest.mark.parametrize("dt", [torch.float32, torch.float64], ids=["f32", "f64"])
def test_amax_amin_rows_exact_with_nan_and_inf(kind, width, dt):
    """A row's max / min is exact whatever the lanes; a NaN anywhere in a row
    (first lane, a lane's middle, the tail after the last full block of
    lanes, a later chunk) makes that row NaN, and infinities count."""
    rng = np.random.default_rng(width)
    a = rng.standard_normal((7, width))
    a[1, 0] = np.nan
    a[2, width // 2] = np.nan
    a[3, width - 1] = np.nan
    a[4, width - 1] = np.inf
    a[5, 0] = -np.inf
    a[6, :] = -np.inf
    x = torch.tensor(a, dtype=dt)
    op = getattr(torch, kind)

    def f(t):
        return op(t * 2.0, -1, keepdim=True) + 1.0
    with torch.no_grad():
        got = torch.compile(f)(x).numpy()
        want = f(x).numpy()
    np.testing.assert_array_equal(got, want)


def test_softmax_backward_reads_the_saved_output():
    """The forward writes softmax's output anyway: the backward reads it
    instead of recomputing exp (and the forward saves no row statistics)."""
    x = torch.randn(6, 40, requires_grad=True)
    w = torch.randn(40, requires_grad=True)
    cf = torch.compile(softmax_of_product)
    cf(x, w).sum().backward()
    e = cf.last_entry
    assert not any(n.op.name() == "aten::exp" for n in e.backward.graph.nodes)
    assert len(e.graph.outputs) == 2     # the output, and itself as the saved value


@pytest.fixture
def stream_everything():
    """The store policy set so that every fused call streams its outputs."""
    from torchlet.backends import cpu
    old = cpu.info()["policy"]["stream_min_bytes"]
    cpu.set_store_policy(stream_min_bytes=1)
    torch.compiler.reset()
    yield
    cpu.set_store_policy(stream_min_bytes=old)
    torch.compiler.reset()


def _layer_norm_then_mul(x, w):
    return layer_norm(x, w) * w


def _chain(x, w):
    return (x * w + 0.5).tanh() * 3


@pytest.mark.parametrize("fn", [rms, softmax_of_product, log_softmax, _layer_norm_then_mul, swiglu, _chain],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("shape", [(3, 7), (5, 2049), (2, 3, 1000), (4, 256)])
def test_streamed_outputs_equal_plain_ones(stream_everything, fn, shape):
    """Streaming stores (a call moving the policy's stream_min_bytes) write
    the same values as plain ones, on rows that start off a 64-byte line
    (odd widths) as on aligned ones."""
    rng = np.random.default_rng(3)
    x = torch.tensor(rng.standard_normal(shape).astype(np.float32))
    w = torch.tensor(rng.standard_normal(shape[-1]).astype(np.float32))
    with torch.no_grad():
        cf = torch.compile(fn)
        got = cf(x, w)
        assert "tl_ustream_copy" in cf.kernels()
    from torchlet.backends import cpu
    cpu.set_store_policy(stream_min_bytes=0)     # 0: never stream
    torch.compiler.reset()
    with torch.no_grad():
        want = torch.compile(fn)(x, w)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
