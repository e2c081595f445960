"""FakeTensor / FakeTensorMode: factories and operators on metadata only,
conversion of real tensors, data-dependent operators, devices, memory."""
import resource

import pytest

import torchlet
import torchlet.nn.functional as F
from torchlet._subclasses.fake_tensor import (
    DataDependentOutputException, DynamicOutputShapeException, FakeTensor, FakeTensorMode)
from torchlet.utils._python_dispatch import TorchDispatchMode, _get_current_dispatch_mode_stack


def test_seed_silu_matmul_is_a_fake_of_the_right_shape():
    with FakeTensorMode():
        h = F.silu(torchlet.empty(4, 128, 8192) @ torchlet.empty(8192, 28672))
    assert type(h).__name__ == "FakeTensor" and isinstance(h, torchlet.Tensor)
    assert h.shape == (4, 128, 28672) and h.dtype == torchlet.float32
    assert h.device == torchlet.device("cpu") and not h.is_meta


def test_factories_and_repr():
    with FakeTensorMode():
        a = torchlet.empty(2, 3)
        b = torchlet.ones(2, dtype=torchlet.int64, device="cuda")
        c = torchlet.zeros(2, requires_grad=True)
        r = torchlet.randn(5)
        s = torchlet.arange(6)
    assert repr(a) == "FakeTensor(..., size=(2, 3))"
    assert repr(b) == "FakeTensor(..., device='cuda:0', size=(2,), dtype=torchlet.int64)"
    assert repr(c) == "FakeTensor(..., size=(2,), requires_grad=True)"
    assert b.device == torchlet.device("cuda", 0) and b.is_cuda and a.is_cpu
    assert r.shape == (5,) and s.shape == (6,) and s.dtype == torchlet.int64
    assert a.data_ptr() == 0


def test_operators_propagate_shape_dtype_device():
    with FakeTensorMode():
        a = torchlet.empty(2, 3)
        b = torchlet.empty(3, dtype=torchlet.float64)
        c = a + b
        assert c.shape == (2, 3) and c.dtype == torchlet.float64 and isinstance(c, FakeTensor)
        assert (a + 2).shape == (2, 3)
        s = a.sum(-1)
        assert s.shape == (2,)
        v = a.view(3, 2).t()
        assert v.shape == (2, 3) and v.stride() == (1, 2)
        g = torchlet.empty(4, 5, device="cuda")
        assert (g * 2).device == torchlet.device("cuda", 0)
        with pytest.raises(RuntimeError, match="Unhandled FakeTensor Device Propagation for aten.add.Tensor"):
            g + torchlet.empty(4, 5)
        assert (g + torchlet.empty(())).device.type == "cuda"     # cpu scalars mix with any device
        m = a.to("cuda")
        assert m.device == torchlet.device("cuda", 0) and isinstance(m, FakeTensor)


def test_inplace_returns_the_same_fake():
    with FakeTensorMode():
        a = torchlet.zeros(3)
        r = a.add_(1)
    assert r is a and isinstance(r, FakeTensor)


def test_data_dependent_operators_raise():
    with FakeTensorMode():
        a = torchlet.empty(4)
        with pytest.raises(DynamicOutputShapeException, match=r"^aten\.nonzero\.default$"):
            torchlet.nonzero(a)
        for f in (lambda: a[0].item(), lambda: bool(a[0]), lambda: a.tolist()):
            with pytest.raises(DataDependentOutputException, match="aten._local_scalar_dense.default"):
                f()


def test_real_tensor_inside_the_mode():
    r = torchlet.ones(2)
    with FakeTensorMode():
        f = torchlet.empty(2)
        with pytest.raises(AssertionError, match="Please convert all Tensors to FakeTensors first or instantiate "
                                                 "FakeTensorMode with 'allow_non_fake_inputs'. Found in "
                                                 r"aten.add.Tensor\(FakeTensor"):
            f + r
    with FakeTensorMode(allow_non_fake_inputs=True):
        out = torchlet.empty(2) + r
    assert isinstance(out, FakeTensor)
    assert r.tolist() == [1.0, 1.0]


def test_from_tensor_memoized_views_requires_grad():
    mode = FakeTensorMode()
    base = torchlet.arange(12.0).reshape(3, 4).requires_grad_()
    f1 = mode.from_tensor(base)
    assert f1 is mode.from_tensor(base)
    assert isinstance(f1, FakeTensor) and f1.requires_grad and f1.shape == (3, 4) and f1.fake_mode is mode
    real_view = base.detach()[1:, ::2]
    fv = mode.from_tensor(real_view)
    assert fv.shape == (2, 2) and fv.stride() == (4, 2) and fv.storage_offset() == 4
    from torchlet._C import lib
    assert lib.tl_tensor_is_alias_of(fv._p, f1._p)        # one fake storage, as the real ones share one
    other = FakeTensorMode()
    with pytest.raises(AssertionError, match="Mixing fake modes NYI"):
        other.from_tensor(f1)


def test_fake_outside_its_mode_still_works():
    with FakeTensorMode() as mode:
        a = torchlet.empty(3, 4)
    b = a.sum(0)                      # no mode: FakeTensor.__torch_dispatch__ re-enters a's mode
    assert isinstance(b, FakeTensor) and b.shape == (4,) and b.fake_mode is mode
    assert _get_current_dispatch_mode_stack() == []


def test_forward_and_backward_on_fakes():
    with FakeTensorMode():
        x = torchlet.empty(8, 16)
        w = torchlet.empty(32, 16, requires_grad=True)
        b = torchlet.empty(32, requires_grad=True)
        y = F.silu(F.linear(x, w, b)).sum()
        y.backward()
    assert isinstance(w.grad, FakeTensor) and w.grad.shape == (32, 16)
    assert isinstance(b.grad, FakeTensor) and b.grad.shape == (32,)


def test_infra_mode_stays_below_user_modes():
    class Log(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.results = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            r = func(*args, **(kwargs or {}))
            self.results.append(type(r).__name__)
            return r

    for order in ("fake_first", "log_first"):
        fake, log = FakeTensorMode(), Log()
        first, second = (fake, log) if order == "fake_first" else (log, fake)
        with first, second:
            names = [type(m).__name__ for m in _get_current_dispatch_mode_stack()]
            torchlet.empty(2) + 1
        assert names == ["FakeTensorMode", "Log"]
        assert log.results == ["FakeTensor", "FakeTensor"]


def test_custom_op_fake_kernel_runs():
    @torchlet.library.custom_op("tcfake::rows", mutates_args=())
    def rows(x: torchlet.Tensor) -> torchlet.Tensor:
        return x.sum(1)

    @rows.register_fake
    def _(x):
        return torchlet.empty(x.shape[0], device=x.device)   # meta inside the kernel

    with FakeTensorMode():
        out = rows(torchlet.empty(7, 3))
    assert isinstance(out, FakeTensor) and out.shape == (7,)


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_a_terabyte_costs_only_metadata():
    before = _peak_rss_mib()
    with FakeTensorMode():
        big = torchlet.empty(2 ** 38)                        # 1 TiB of float32
        x = torchlet.empty(64, 16384)
        w1 = torchlet.empty(16384, 16384, requires_grad=True)   # 1 GiB each, were it real
        w2 = torchlet.empty(16384, 16384, requires_grad=True)
        loss = F.linear(F.silu(F.linear(x, w1)), w2).sum()
        loss.backward()
    assert big.shape == (2 ** 38,) and w1.grad.shape == (16384, 16384)
    assert _peak_rss_mib() - before < 200


def test_fake_against_torch_shapes():
    torch = pytest.importorskip("torch")
    from torch._subclasses.fake_tensor import FakeTensorMode as TFM
    for lib, Mode in ((torchlet, FakeTensorMode), (torch, TFM)):
        with Mode():
            x = lib.empty(2, 5, 8)
            y = lib.nn.functional.layer_norm(x, (8,)).softmax(-1) @ lib.empty(8, 3)
            out = (tuple(y.shape), str(y.dtype).split(".")[-1], y.stride())
        if lib is torchlet:
            ours = out
        else:
            assert ours == out


def test_module_init_forward_backward_under_the_mode():
    nn = torchlet.nn
    with FakeTensorMode():
        m = nn.Sequential(nn.Linear(16, 32), nn.SiLU(), nn.Linear(32, 4))
        y = m(torchlet.empty(8, 16))
        y.sum().backward()
    params = list(m.parameters())
    assert all(isinstance(p, FakeTensor) and isinstance(p, nn.Parameter) for p in params)
    assert [tuple(p.grad.shape) for p in params] == [(32, 16), (32,), (4, 32), (4,)]
    assert isinstance(y, FakeTensor) and y.shape == (8, 4) and params[0].device == torchlet.device("cpu")


def test_detach_keeps_the_subclass():
    with FakeTensorMode() as mode:
        a = torchlet.empty(3, requires_grad=True)
    d = a.detach()
    assert isinstance(d, FakeTensor) and d.fake_mode is mode and not d.requires_grad


def test_operator_without_a_meta_kernel_falls_back_or_raises():
    from torchlet._subclasses.fake_tensor import UnsupportedOperatorException
    lb = torchlet.library.Library("tcnometa", "DEF")
    try:
        lb.define("twice(Tensor x) -> Tensor")
        lb.impl("twice", lambda x: x * 2, "CPU")         # no Meta kernel, no fake
        op = torchlet.ops.tcnometa.twice.default
        with FakeTensorMode():
            out = op(torchlet.empty(3, 2))               # the real kernel on zeros, metadata kept
        assert isinstance(out, FakeTensor) and out.shape == (3, 2)
        with FakeTensorMode(allow_fallback_kernels=False):
            with pytest.raises(UnsupportedOperatorException, match=r"^tcnometa\.twice\.default$"):
                op(torchlet.empty(3))
    finally:
        lb._destroy()


def test_fallback_kernel_on_strided_views():
    # scaled_dot_product_attention has no Meta kernel: the fallback runs it on
    # zeros laid out like its inputs, views that are slices of a wider qkv
    from torchlet._subclasses.fake_tensor import FakeTensor, FakeTensorMode
    B, T, D, H = 2, 5, 8, 2
    with FakeTensorMode() as fm:
        x = fm.from_tensor(torchlet.randn(B, T, D))
        w = fm.from_tensor(torchlet.randn(3 * D, D))
        q, k, v = (t.reshape(B, T, H, D // H).transpose(1, 2) for t in F.linear(x, w).chunk(3, -1))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert isinstance(a, FakeTensor) and tuple(a.shape) == (B, H, T, D // H) and a.fake_device.type == "cpu"
