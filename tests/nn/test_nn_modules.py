"""torchlet.nn: Parameter, Module's registry / iteration / conversion / repr,
Sequential, the layers' factory keywords, nn.init, and the meta-device seed
program (an 8192x28672 MLP built on meta without allocating), each beside
PyTorch where it is installed."""
import resource
import subprocess
import sys
from collections import OrderedDict

import numpy as np
import pytest

import torchlet
import torchlet.nn as nn
from torchlet.nn import init


def _torch():
    return pytest.importorskip("torch")


def _maxrss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# ------------------------------------------------------------------ seed program


def _meta_mlp(lib):
    with lib.device("meta"):
        return lib.nn.Sequential(lib.nn.Linear(8192, 28672, bias=False), lib.nn.Linear(28672, 8192, bias=False))


_RSS_PROBE = """
import resource, sys
import torchlet
def peak(): return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
torchlet.ones(1)
before = peak()
with torchlet.device("meta"):
    m = torchlet.nn.Sequential(torchlet.nn.Linear(8192, 28672, bias=False), torchlet.nn.Linear(28672, 8192, bias=False))
assert sum(p.numel() for p in m.parameters()) == 469762048
print(peak() - before)
"""


def test_meta_mlp_seed():
    m = _meta_mlp(torchlet)
    assert sum(p.numel() for p in m.parameters()) == 469762048
    assert all(p.device == torchlet.device("meta") and p.is_meta for p in m.parameters())
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in m.parameters())
    # a forward pass on meta is shape-only
    with torchlet.device("meta"):
        y = m(torchlet.empty(3, 8192))
    assert y.is_meta and tuple(y.shape) == (3, 8192)
    assert torchlet.get_default_device().type == "cpu"


def test_meta_mlp_seed_allocates_nothing():
    """peak RSS of a fresh process grows by a few MB, not the 1.9 GB the float32 weights would take"""
    out = subprocess.run([sys.executable, "-c", _RSS_PROBE], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert float(out.stdout) < 32, f"peak RSS grew by {out.stdout} MB"


def test_meta_mlp_seed_matches_pytorch():
    torch = _torch()
    ref = _meta_mlp(torch)
    m = _meta_mlp(torchlet)
    assert [(n, tuple(p.shape), str(p.device)) for n, p in m.named_parameters()] == \
        [(n, tuple(p.shape), str(p.device)) for n, p in ref.named_parameters()]
    assert repr(m) == repr(ref)


# -------------------------------------------------------------------- Parameter


def test_parameter_basics():
    data = torchlet.ones(2)
    p = nn.Parameter(data)
    assert isinstance(p, nn.Parameter) and isinstance(p, torchlet.Tensor)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    assert not nn.Parameter(data, requires_grad=False).requires_grad
    assert not data.requires_grad                                 # the data itself is untouched
    data.add_(1)
    assert p.tolist() == [2.0, 2.0]                               # shares storage with its data
    assert type(p + 1) is torchlet.Tensor and type(p * p) is torchlet.Tensor   # ops return plain tensors
    assert type(p.detach()) is torchlet.Tensor
    with torchlet.no_grad():
        assert p.mul_(2) is p                                      # in place returns the Parameter
    (p * 3).sum().backward()
    assert p.grad.tolist() == [3.0, 3.0]
    with pytest.raises(TypeError, match="must be Tensor"):
        nn.Parameter([1.0])


def test_parameter_repr_matches_pytorch():
    torch = _torch()
    for req in (True, False):
        assert repr(nn.Parameter(torchlet.ones(2), requires_grad=req)) == \
            repr(torch.nn.Parameter(torch.ones(2), requires_grad=req))
    assert repr(nn.Parameter(torchlet.empty(2, 3, device="meta"))) == \
        "Parameter containing:\ntensor(..., device='meta', size=(2, 3), requires_grad=True)"


# ------------------------------------------------------------------------ Module


def _net(lib):
    n = lib.nn
    lib.manual_seed(0)
    return n.Sequential(n.Linear(2, 3), n.SiLU(), n.LayerNorm(3), n.RMSNorm([3]), n.Embedding(4, 3, padding_idx=0),
                        n.Sequential(n.Linear(3, 3, bias=False)))


def test_module_repr_and_iteration_match_pytorch():
    torch = _torch()
    a, b = _net(torchlet), _net(torch)
    assert repr(a) == repr(b)
    assert repr(a[1:3]) == repr(b[1:3])
    assert repr(a[-1]) == repr(b[-1])
    assert [k for k, _ in a.named_modules()] == [k for k, _ in b.named_modules()]
    assert [k for k, _ in a.named_children()] == [k for k, _ in b.named_children()]
    assert [(k, tuple(p.shape)) for k, p in a.named_parameters()] == \
        [(k, tuple(p.shape)) for k, p in b.named_parameters()]
    assert list(a.state_dict()) == list(b.state_dict())
    assert len(list(a.modules())) == len(list(b.modules())) == 8
    for lib in (torchlet, torch):
        n = lib.nn
        assert repr(n.SiLU(inplace=True)) == "SiLU(inplace=True)"
        assert repr(n.LayerNorm(3, elementwise_affine=False, bias=False)) == \
            "LayerNorm((3,), eps=1e-05, elementwise_affine=False, bias=False)"
        assert repr(n.RMSNorm(3, eps=1e-6)) == "RMSNorm((3,), eps=1e-06, elementwise_affine=True)"
        assert repr(n.Sequential()) == "Sequential()"


def test_sequential():
    a, b, c = nn.Linear(2, 2), nn.SiLU(), nn.Linear(2, 1)
    s = nn.Sequential(a, b, c)
    assert len(s) == 3 and s[0] is a and s[-1] is c and s[-3] is a and list(s) == [a, b, c]
    t = s[1:]
    assert isinstance(t, nn.Sequential) and list(t) == [b, c] and list(t._modules) == ["1", "2"]
    with pytest.raises(IndexError, match="^index 3 is out of range$"):
        s[3]
    with pytest.raises(IndexError, match="^index -4 is out of range$"):
        s[-4]
    d = nn.Linear(1, 1)
    assert s.append(d) is s and len(s) == 4 and s[3] is d
    assert [k for k, _ in s.named_children()] == ["0", "1", "2", "3"]
    del s[1]
    assert list(s._modules) == ["0", "1", "2"] and s[1] is c
    named = nn.Sequential(OrderedDict(first=a, act=b))
    assert [k for k, _ in named.named_children()] == ["first", "act"] and named.first is a
    x = torchlet.randn(4, 2)
    y = nn.Sequential(a, b, c)(x)
    np.testing.assert_allclose(y.numpy(), c(b(a(x))).numpy())


def test_module_registration_and_errors():
    m = nn.Linear(2, 3)
    with pytest.raises(TypeError, match=r"^cannot assign 'torchlet.FloatTensor' as parameter 'weight' "
                                        r"\(torch.nn.Parameter or None expected\)$"):
        m.weight = torchlet.ones(3, 2)
    m.register_buffer("running", torchlet.zeros(3))
    m.register_buffer("scratch", torchlet.zeros(1), persistent=False)
    assert list(m.state_dict()) == ["weight", "bias", "running"]
    assert [k for k, _ in m.named_buffers()] == ["running", "scratch"]
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'foo'"):
        m.foo
    nb = nn.Linear(2, 3, bias=False)
    assert nb.bias is None and [k for k, _ in nb.named_parameters()] == ["weight"]
    shared = nn.Linear(2, 2)
    s = nn.Sequential(shared, shared)
    assert len(list(s.parameters())) == 2             # shared parameters listed once
    sd = m.state_dict()
    assert not sd["weight"].requires_grad and type(sd["weight"]) is torchlet.Tensor
    with pytest.raises(NotImplementedError, match='missing the required "forward" function'):
        nn.Module()(1)


def test_load_state_dict_roundtrip():
    a, b = nn.Linear(3, 2), nn.Linear(3, 2)
    b.load_state_dict(a.state_dict())
    assert b.weight.tolist() == a.weight.tolist() and b.bias.tolist() == a.bias.tolist()
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "bias"'):
        b.load_state_dict({"weight": a.weight.detach()})


def test_module_to_and_casts():
    m = nn.Sequential(nn.Linear(3, 2), nn.LayerNorm(2))
    w = m[0].weight
    m.to(torchlet.float64)
    assert m[0].weight is w and w.dtype is torchlet.float64 and w.requires_grad   # identity kept
    assert all(p.dtype is torchlet.float64 for p in m.parameters())
    assert m.float() is m and all(p.dtype is torchlet.float32 for p in m.parameters())
    m.double()
    assert all(p.dtype is torchlet.float64 for p in m.parameters())
    m.to("meta")
    assert all(p.is_meta and isinstance(p, nn.Parameter) for p in m.parameters())
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor"):
        m.cpu()
    m2 = nn.Linear(2, 2).to(device="cpu", dtype=torchlet.float64)
    assert m2.weight.dtype is torchlet.float64 and m2.weight.is_cpu
    if not torchlet.cuda.is_available():   # PyTorch's error without a driver
        with pytest.raises(RuntimeError, match="Found no NVIDIA driver|No CUDA GPUs are available"):
            nn.Linear(2, 2).cuda()
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point"):
        m2.to(torchlet.int64)


def test_train_eval_and_requires_grad():
    m = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.SiLU()))
    assert m.eval() is m and not m.training and not m[1][0].training
    m.train()
    assert m[1][0].training
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())


# ---------------------------------------------------------------- layers + init


@pytest.mark.parametrize("make", [
    lambda **k: nn.Linear(4, 3, **k), lambda **k: nn.LayerNorm(4, **k), lambda **k: nn.RMSNorm(4, **k),
    lambda **k: nn.Embedding(5, 4, **k),
])
def test_layer_factory_kwargs(make):
    m = make(dtype=torchlet.float64)
    assert all(p.dtype is torchlet.float64 and p.is_cpu for p in m.parameters())
    m = make(device="meta")
    assert all(p.is_meta and p.dtype is torchlet.float32 for p in m.parameters())
    with torchlet.device("meta"):
        m = make()
        assert all(p.is_meta for p in m.parameters())
        m = make(device="cpu")
        assert all(p.is_cpu for p in m.parameters())


def test_default_init_values():
    torchlet.manual_seed(0)
    lin = nn.Linear(100, 50)
    w, b = lin.weight.numpy(), lin.bias.numpy()
    assert np.abs(w).max() <= 0.1 and np.abs(b).max() <= 0.1 and w.std() > 0.05   # U(-1/sqrt(100), 1/sqrt(100))
    ln = nn.LayerNorm(3)
    assert ln.weight.tolist() == [1.0] * 3 and ln.bias.tolist() == [0.0] * 3
    emb = nn.Embedding(200, 50, padding_idx=-1)
    assert emb.padding_idx == 199 and emb.weight[199].tolist() == [0.0] * 50
    assert abs(float(emb.weight[:199].std())) == pytest.approx(1.0, abs=0.05)


def test_init_functions():
    torchlet.manual_seed(0)
    t = torchlet.empty(1000, 30)
    assert init.uniform_(t, -2, 3) is t
    a = t.numpy()
    assert a.min() >= -2 and a.max() <= 3 and abs(a.mean() - 0.5) < 0.05
    init.normal_(t, 1.0, 0.5)
    assert abs(t.numpy().mean() - 1.0) < 0.02 and abs(t.numpy().std() - 0.5) < 0.02
    init.kaiming_uniform_(t, a=0, nonlinearity="relu")
    bound = np.sqrt(2.0) * np.sqrt(3.0 / 30)
    assert np.abs(t.numpy()).max() <= bound and np.abs(t.numpy()).max() > 0.9 * bound
    assert init.constant_(t, 0.25).numpy().max() == 0.25 and init.zeros_(t).numpy().max() == 0.0
    p = nn.Parameter(torchlet.empty(3, 3))
    init.xavier_uniform_(p)
    assert p.grad_fn is None and p.requires_grad                      # no history recorded
    for bad, msg in [(lambda: init.kaiming_uniform_(torchlet.empty(3)), "fewer than 2 dimensions"),
                     (lambda: init.calculate_gain("foo"), "Unsupported nonlinearity foo"),
                     (lambda: init.kaiming_uniform_(t, mode="x"), r"Mode x not supported")]:
        with pytest.raises(ValueError, match=msg):
            bad()
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        init.kaiming_uniform_(torchlet.empty(0, 3))


def test_init_on_meta_is_metadata_only():
    t = torchlet.empty(4096, 4096, device="meta")
    before = _maxrss_mb()
    for f in (init.uniform_, init.normal_, init.kaiming_uniform_, init.xavier_normal_, init.ones_, init.zeros_):
        assert f(t) is t and t.is_meta
    assert _maxrss_mb() - before < 32


def test_init_matches_pytorch_gains():
    torch = _torch()
    for nl, p in [("linear", None), ("relu", None), ("leaky_relu", None), ("leaky_relu", 0.2), ("tanh", None),
                  ("selu", None), ("sigmoid", None)]:
        assert init.calculate_gain(nl, p) == pytest.approx(torch.nn.init.calculate_gain(nl, p))
    ta, tb = torchlet.empty(5, 4, 3), torch.empty(5, 4, 3)
    assert init._calculate_fan_in_and_fan_out(ta) == torch.nn.init._calculate_fan_in_and_fan_out(tb)


@pytest.mark.parametrize("lib_name", ["torchlet", "torch"])
def test_init_reported_to_modes_as_itself(lib_name):
    lib = pytest.importorskip(lib_name)
    log = []

    class Log(lib.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            log.append(func.__name__)
            return func(*args, **(kwargs or {}))

    t = lib.empty(4, 3)
    with Log():
        lib.nn.init.uniform_(t, -1, 1)
        lib.nn.init.normal_(t)
        lib.nn.init.constant_(t, 0.5)
        lib.nn.init.kaiming_uniform_(t)
    assert log == ["uniform_", "normal_", "constant_", "kaiming_uniform_"]
