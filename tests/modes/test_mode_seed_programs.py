"""The seed programs of the dispatcher's Python layers, run with ``import
torchlet as torch``: their printed output must be PyTorch 2.13's (recorded
below from the CPU wheel; also compared live when PyTorch is installed)."""
import contextlib
import io
import textwrap

import pytest

import torchlet

SEED_LOG_OPS = textwrap.dedent('''
    import torch.nn.functional as F
    from torch.utils._python_dispatch import TorchDispatchMode

    class LogOps(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            print(func)
            return func(*args, **(kwargs or {}))

    x, w, W = torch.randn(4, 8), torch.randn(8), torch.randn(16, 8)
    with LogOps():
        h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
        y = F.silu(F.linear(h, W))
    print(tuple(y.shape))
''')

SEED_COUNT = textwrap.dedent('''
    from collections import Counter
    import torch.nn.functional as F
    from torch.utils._python_dispatch import TorchDispatchMode

    class Count(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.c = Counter()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.c[str(func._schema.name)] += 1
            return func(*args, **(kwargs or {}))

    with Count() as m:
        a, b = torch.randn(4, 4), torch.randn(4, 4)
        (a + b).relu().sum()
    print(dict(m.c))

    class CountOverloads(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.c = Counter()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.c[str(func)] += 1
            return func(*args, **(kwargs or {}))

    q, k, v = (torch.randn(1, 8, 128, 64) for _ in range(3))
    with CountOverloads() as m:
        F.scaled_dot_product_attention(q, k, v, is_causal=True)
    for name, n in m.c.items():
        print(name, n)
''')

SEED_META_AND_FAKE = textwrap.dedent('''
    import torch.nn as nn
    import torch.nn.functional as F
    from torch._subclasses.fake_tensor import FakeTensorMode

    with torch.device("meta"):
        m = nn.Sequential(nn.Linear(8192, 28672, bias=False), nn.Linear(28672, 8192, bias=False))
    print(sum(p.numel() for p in m.parameters()), {str(p.device) for p in m.parameters()})
    with FakeTensorMode():
        h = F.silu(torch.empty(4, 128, 8192) @ torch.empty(8192, 28672))
    print(type(h).__name__, tuple(h.shape))
    print(torch._C._dispatch_keys(torch.ones(2)))
''')

EXPECTED = {
    "log_ops": """\
aten.pow.Tensor_Scalar
aten.mean.dim
aten.add.Tensor
aten.rsqrt.default
aten.mul.Tensor
aten.mul.Tensor
aten.t.default
aten.mm.default
aten.silu.default
(4, 16)
""",
    "count": """\
{'aten::randn': 2, 'aten::add': 1, 'aten::relu': 1, 'aten::sum': 1}
aten._scaled_dot_product_flash_attention_for_cpu.default 1
""",
    "meta_and_fake": """\
469762048 {'meta'}
FakeTensor (4, 128, 28672)
DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)
""",
}

PROGRAMS = {"log_ops": SEED_LOG_OPS, "count": SEED_COUNT, "meta_and_fake": SEED_META_AND_FAKE}


class _As:
    """`import torch` / `import torch.nn.functional as F` inside a program reach `lib`."""

    def __init__(self, lib):
        self.lib = lib

    def __enter__(self):
        import sys
        self.saved = {k: v for k, v in sys.modules.items() if k == "torch" or k.startswith("torch.")}
        if self.lib is not torchlet:
            return self
        for k in list(self.saved):
            del sys.modules[k]
        import importlib
        for mod in ("torchlet.nn.functional", "torchlet.utils._python_dispatch", "torchlet._subclasses.fake_tensor"):
            importlib.import_module(mod)
        for k, v in list(sys.modules.items()):
            if k == "torchlet" or k.startswith("torchlet."):
                sys.modules["torch" + k[len("torchlet"):]] = v
        return self

    def __exit__(self, *exc):
        import sys
        if self.lib is not torchlet:
            return
        for k in [k for k in sys.modules if k == "torch" or k.startswith("torch.")]:
            del sys.modules[k]
        sys.modules.update(self.saved)


def run(program: str, lib) -> str:
    buf = io.StringIO()
    with _As(lib), contextlib.redirect_stdout(buf):
        exec(compile(program, "<seed>", "exec"), {"torch": lib})
    return buf.getvalue()


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_seed_program_under_torchlet(name):
    assert run(PROGRAMS[name], torchlet) == EXPECTED[name]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_seed_program_under_pytorch(name):
    torch = pytest.importorskip("torch")
    assert run(PROGRAMS[name], torch) == EXPECTED[name]
