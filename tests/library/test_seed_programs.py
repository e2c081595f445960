"""The seed programs that use the operator table from Python, run with
``import torchlet as torch``: their printed output must be PyTorch 2.13's.
Each program is run under torchlet and compared with the recorded output,
and under PyTorch as well when it is installed (the recording is PyTorch's)."""
import contextlib
import io
import textwrap

import pytest

import torchlet

SEED_OPS = textwrap.dedent('''
    print(torch.ops.aten.add.Tensor)
    print(torch.ops.aten.add.Tensor._schema)
    print(torch.ops.aten.add_.Tensor._schema)
    print(torch.ops.aten.add.out._schema)
    print(repr(torch.ops.aten.add.Tensor), repr(torch.ops.aten.add))
    print(torch.ops.aten.add.Tensor.name(), torch.ops.aten.add.Tensor._schema.name,
          repr(torch.ops.aten.sin.default._schema.overload_name))
    print(torch.ops.aten.add.Tensor is torch.ops.aten.add.Tensor,
          torch.ops.aten.add.Tensor.overloadpacket is torch.ops.aten.add)
    print([str(t) for t in torch.ops.aten.add.Tensor.tags])
    print(torch.ops.aten.add.Tensor(torch.tensor([1., 2.]), torch.tensor([3., 4.]), alpha=2))
    print(hasattr(torch.ops.aten, "no_such_op"), hasattr(torch.ops.aten.add, "no_such_overload"))
''')

SEED_CUSTOM_OPS = textwrap.dedent('''
    Tensor = torch.Tensor

    @torch.library.custom_op("demo::rms_norm", mutates_args=())
    def rms_norm(x: Tensor, w: Tensor, eps: float) -> Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w

    @rms_norm.register_fake
    def _(x, w, eps):
        return torch.empty_like(x)

    @torch.library.custom_op("demo::store_kv", mutates_args={"cache"})
    def store_kv(cache: Tensor, slots: Tensor, value: Tensor) -> None:
        cache.index_copy_(0, slots, value)

    print(torch.ops.demo.rms_norm.default._schema)
    print(torch.ops.demo.store_kv.default._schema)
    x = torch.ones(2, 16)
    print(rms_norm(x, torch.ones(16), 1e-6).shape)
    big = torch.empty(4096, 8192, device="meta")
    m = rms_norm(big, torch.empty(8192, device="meta"), 1e-6)
    print(m.shape, m.device)
    cache = torch.zeros(8, 4)
    v = cache._version
    store_kv(cache, torch.tensor([1, 5]), torch.ones(2, 4))
    print(cache.sum(1).nonzero().flatten().tolist(), cache._version - v)
    print(rms_norm)
''')

SEED_LIBRARY = textwrap.dedent('''
    lib = torch.library.Library("myops", "DEF")
    lib.define("scale(Tensor x, float alpha) -> Tensor")

    def scale_cpu(x, alpha):
        return x * alpha

    lib.impl("scale", scale_cpu, "CPU")
    print(lib)
    print(torch.ops.myops.scale(torch.tensor([1.0, 2.0, 3.0]), 2.0))
    print(torch.ops.myops.scale.default._schema)
    try:
        torch.ops.myops.scale(torch.empty(3, device="meta"), 2.0)
    except NotImplementedError as e:
        print(str(e).split(". You may")[0])
    lib._destroy()
    print(hasattr(torch.ops.myops, "scale"))
''')

SEED_OPCHECK = textwrap.dedent('''
    Tensor = torch.Tensor

    @torch.library.custom_op("demo::sneaky", mutates_args=())
    def sneaky(x: Tensor) -> Tensor:
        x.add_(1)
        return x.clone()

    @sneaky.register_fake
    def _(x):
        return torch.empty_like(x)

    try:
        torch.library.opcheck(sneaky, (torch.zeros(3),))
    except Exception as e:
        print(type(e).__name__, "test_schema" in str(e), "not defined as mutable" in str(e))
''')

# PyTorch 2.13's output of each program (recorded from the CPU wheel)
EXPECTED = {
    "ops": """\
aten.add.Tensor
aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)
aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
<OpOverload(op='aten.add', overload='Tensor')> <OpOverloadPacket(op='aten.add')>
aten::add.Tensor aten::add ''
True True
['Tag.core', 'Tag.pointwise', 'Tag.pt2_compliant_tag']
tensor([ 7., 10.])
False False
""",
    "custom_ops": """\
demo::rms_norm(Tensor x, Tensor w, float eps) -> Tensor
demo::store_kv(Tensor(a0!) cache, Tensor slots, Tensor value) -> ()
{size}([2, 16])
{size}([4096, 8192]) meta
[1, 5] 2
<CustomOpDef(demo::rms_norm)>
""",
    "library": """\
Library(kind=DEF, ns=myops, dispatch_key=)>
tensor([2., 4., 6.])
myops::scale(Tensor x, float alpha) -> Tensor
myops::scale: attempted to run this operator with Meta tensors, but there was no fake impl or Meta kernel registered
False
""",
    "opcheck": """\
OpCheckError True True
""",
}

PROGRAMS = {"ops": SEED_OPS, "custom_ops": SEED_CUSTOM_OPS, "library": SEED_LIBRARY, "opcheck": SEED_OPCHECK}


def run(program: str, torch_module) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(program, "<seed>", "exec"), {"torch": torch_module})
    return buf.getvalue()


def expected(name: str, size_name: str) -> str:
    return EXPECTED[name].replace("{size}", size_name)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_seed_program_under_torchlet(name):
    try:
        out = run(PROGRAMS[name], torchlet)
    finally:
        _cleanup_torchlet()
    assert out == expected(name, "torchlet.Size")


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_seed_program_under_pytorch(name):
    torch = pytest.importorskip("torch")
    if name == "opcheck":
        import torch.library
    out = run(PROGRAMS[name], torch)
    assert out == expected(name, "torch.Size")


def _cleanup_torchlet():
    from torchlet._library.custom_ops import _defs
    for qn in ("demo::rms_norm", "demo::store_kv", "demo::sneaky"):
        d = _defs.get(qn)
        if d is not None:
            d._destroy()
