"""torchlet against PyTorch's own OpInfo samples
(torch.testing._internal.common_methods_invocations.op_db).

For every OpInfo whose operator torchlet has (resolved by the OpInfo's name:
`nn.functional.x` -> torchlet.nn.functional.x, `linalg.x` -> torchlet.linalg.x,
`x` -> torchlet.x, else the method Tensor.x, else the operator
torchlet.ops.aten.x for OpInfos of aten operators without a Python function,
such as max_pool2d_with_indices_backward), each CPU sample of each dtype
torchlet has is converted through numpy (strides kept), run through both
libraries, and the outputs compared: values (NaN equal), dtypes, shapes.
Gradients are compared on the float64 samples of differentiable operators
(sum of the floating outputs, backward, the inputs' .grad).

Float tolerances are torch.testing's per dtype; where they are missed, the
sample is judged against PyTorch run in float64: torchlet passes when its error
from that reference is within twice PyTorch's own (two float32 implementations
that sum in another order differ from each other by more than either differs
from the exact result, e.g. scaled_dot_product_attention).

Sample operators that draw random numbers (dropout, rand-like) and samples
PyTorch itself rejects are not counted; operators that draw a random
argument they also take explicitly (fractional max pooling's
`_random_samples`) get one drawn by torch, the same for both libraries.

pytest: marked `opinfo` (deselected by `make test`, run with `make opinfo` or
`pytest -m opinfo tests/opinfo`); one test per present OpInfo, failing when a
sample mismatches. Script: `python tests/opinfo/test_opinfo_samples.py --report
[--grad] [NAME ...]` prints the coverage (present / total CPU OpInfos,
samples matching) and the mismatches.
"""
from __future__ import annotations

import math
import sys
import types
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")  # torch.testing._internal needs it
cmi = pytest.importorskip("torch.testing._internal.common_methods_invocations")

import torchlet as tl  # noqa: E402

pytestmark = pytest.mark.opinfo

# torch dtype -> torchlet dtype, for the dtypes torchlet has
DTYPES = {
    torch.float32: tl.float32, torch.float64: tl.float64, torch.float16: tl.float16,
    torch.bfloat16: tl.bfloat16, torch.int64: tl.int64, torch.int32: tl.int32, torch.int16: tl.int16,
    torch.int8: tl.int8, torch.uint8: tl.uint8, torch.bool: tl.bool,
}
# complex tensors convert both ways; complex *sample dtypes* run only for the
# OpInfos of operators with complex kernels (docs/RUNTIME.md "Complex dtypes")
CDTYPES = {torch.complex64: tl.complex64, torch.complex128: tl.complex128}
COMPLEX_OPS = {"view_as_real", "view_as_complex", "real", "imag", "conj", "conj_physical", "resolve_conj",
               "complex", "polar", "angle", "add", "sub", "mul", "div", "neg", "eq", "ne", "sum", "mean", "mm",
               "bmm", "isclose", "allclose", "vdot", "dot", "mv", "nonzero", "count_nonzero",
               "linalg.eig", "linalg.eigvals", "abs", "exp", "log", "sqrt", "sin", "cos", "tan", "sinh", "cosh",
               "tanh", "sigmoid", "reciprocal", "rsqrt", "sgn", "pow", "prod", "cumsum", "cumprod",
               "log1p", "expm1"}
TOL = {torch.float16: (1e-3, 1e-5), torch.bfloat16: (1.6e-2, 1e-5), torch.float32: (1.3e-6, 1e-5),
       torch.float64: (1e-7, 1e-7), torch.complex64: (1.3e-6, 1e-5), torch.complex128: (1e-7, 1e-7)}


def runs_complex(op):
    return op.name in COMPLEX_OPS or op.name.startswith("fft.")
# OpInfos whose samples draw random numbers or leave memory uninitialised: values cannot match
RANDOM = ("dropout", "rand", "bernoulli", "multinomial", "normal", "uniform", "randint", "randn", "randperm",
          "empty", "new_empty", "empty_like", "empty_strided", "new_empty_strided", "empty_permuted",
          "feature_alpha_dropout", "rand_like", "randn_like", "randint_like", "cauchy", "exponential", "geometric",
          "log_normal")


class Unconvertible(Exception):
    pass


def cpu_opinfos():
    """OpInfos that run on CPU (some dtype supported there)."""
    return [op for op in cmi.op_db if op.supported_dtypes("cpu")]


def resolve(op):
    """torchlet's callable for an OpInfo, or None."""
    name = op.name
    parts = name.split(".")
    obj = tl
    for p in parts:
        obj = getattr(obj, p, None)
        if obj is None:
            break
    if obj is not None and callable(obj):
        return obj
    if len(parts) == 1 and hasattr(tl.Tensor, name):
        meth = getattr(tl.Tensor, name)
        return lambda self, *a, **k: meth(self, *a, **k)
    if len(parts) == 1 and name in tl.ops.aten:   # an aten operator the OpInfo calls through torch.ops.aten
        return getattr(tl.ops.aten, name)
    return None


def callable_for(op):
    """What to run for an OpInfo in torchlet: its `op` when that is a Python
    wrapper of the test suite (`lambda w, i, **k: torch.nn.functional.embedding(i,
    w, **k)`), re-bound with `torch` meaning torchlet; else the resolved name."""
    f = op.op
    if isinstance(f, types.FunctionType) and (f.__module__ or "").startswith("torch.testing"):
        g = dict(f.__globals__)
        g["torch"] = tl
        g["F"] = tl.nn.functional
        return types.FunctionType(f.__code__, g, f.__name__, f.__defaults__, f.__closure__)
    return resolve(op)


def is_random(op):
    return any(op.name == r or op.name.endswith("." + r) or op.name.endswith("_" + r) for r in RANDOM) \
        or "dropout" in op.name


# --------------------------------------------------------------- conversion

def to_tl(x, requires_grad=False):
    if isinstance(x, torch.Tensor):
        if (x.dtype not in DTYPES and x.dtype not in CDTYPES) or x.is_sparse or x.layout != torch.strided:
            raise Unconvertible(f"dtype {x.dtype}")
        if x.is_conj() or x.is_neg():   # a lazy conjugate: torchlet gets its values (no conj bit)
            x = x.resolve_conj().resolve_neg()
        d = x.detach()
        if d.dtype == torch.bfloat16:
            t = tl.from_numpy(d.float().numpy()).to(tl.bfloat16)
        elif any(s < 0 for s in d.stride()):
            t = tl.from_numpy(d.contiguous().numpy())
        elif d.storage_offset() or d.untyped_storage().nbytes() > d.numel() * d.element_size():
            # a view into a larger storage (as_strided's partial views): the whole storage, then the view
            n = d.untyped_storage().nbytes() // d.element_size()
            whole = torch.empty(0, dtype=d.dtype).set_(d.untyped_storage(), 0, (n,), (1,))
            t = tl.as_strided(tl.from_numpy(whole.numpy()), tuple(d.shape), d.stride(), d.storage_offset())
        else:
            t = tl.from_numpy(d.numpy())  # numpy keeps the strides
        if requires_grad and x.requires_grad:
            t = t.clone().requires_grad_(True) if not t.is_contiguous() else t.clone().requires_grad_(True)
        return t
    if isinstance(x, torch.dtype):
        if x not in DTYPES and x not in CDTYPES:
            raise Unconvertible(f"dtype {x}")
        return DTYPES.get(x) or CDTYPES[x]
    if isinstance(x, torch.device):
        return tl.device(x.type)
    if isinstance(x, torch.Size):
        return tuple(x)
    if isinstance(x, (list, tuple)):
        return type(x)(to_tl(v, requires_grad) for v in x)
    if isinstance(x, dict):
        return {k: to_tl(v, requires_grad) for k, v in x.items()}
    if isinstance(x, torch.memory_format) or isinstance(x, torch.layout) or isinstance(x, torch.Generator):
        raise Unconvertible(type(x).__name__)
    if callable(x) and not isinstance(x, type):
        raise Unconvertible("callable argument")
    return x


def to_np(x):
    if isinstance(x, torch.Tensor):
        d = x.detach()
        if d._is_zerotensor():   # PyTorch's efficient zeros (sgn's gradient of a real input)
            d = torch.zeros(d.shape, dtype=d.dtype)
        d = d.resolve_conj()     # PyTorch's lazy conjugates (torchlet's are materialised)
        return d.float().numpy() if d.dtype == torch.bfloat16 else d.numpy()
    if isinstance(x, tl.Tensor):
        d = x.detach()
        return d.to(tl.float32).numpy() if d.dtype == tl.bfloat16 else d.numpy()
    return x


def _wide(a):
    """a numpy array in float64 (complex128 for complex data)"""
    return a.astype(np.complex128 if np.iscomplexobj(a) else np.float64)


def dtype_name(x):
    return str(x.dtype).split(".")[-1]


def compare(got, exp, exp64=None, path="out"):
    """None when equal, else a one-line reason."""
    if isinstance(exp, torch.Tensor):
        if not isinstance(got, tl.Tensor):
            return f"{path}: expected a Tensor, got {type(got).__name__}"
        if dtype_name(got) != dtype_name(exp):
            return f"{path}: dtype {dtype_name(got)} != {dtype_name(exp)}"
        if tuple(got.shape) != tuple(exp.shape):
            return f"{path}: shape {tuple(got.shape)} != {tuple(exp.shape)}"
        g, e = to_np(got), to_np(exp)
        if exp.dtype in TOL:
            rtol, atol = TOL[exp.dtype]
            if np.allclose(g, e, rtol=rtol, atol=atol, equal_nan=True):
                return None
            if isinstance(exp64, torch.Tensor) and exp64.shape == exp.shape:
                r = _wide(exp64.detach().resolve_conj().numpy())  # a factory given dtype= stays in it
                with np.errstate(invalid="ignore"):
                    eg = np.nanmax(np.abs(_wide(g) - r)) if g.size else 0.0
                    ee = np.nanmax(np.abs(_wide(e) - r)) if e.size else 0.0
                if np.array_equal(np.isnan(g), np.isnan(e)) and eg <= 2 * ee + atol:
                    return None
            with np.errstate(invalid="ignore"):
                err = np.nanmax(np.abs(_wide(g) - e)) if g.size else 0.0
            return f"{path}: values differ (max abs err {err:.3g})"
        if not np.array_equal(g, e):
            return f"{path}: values differ"
        return None
    if isinstance(exp, (list, tuple)):
        if not isinstance(got, (list, tuple)) or len(got) != len(exp):
            return f"{path}: expected a sequence of {len(exp)}, got {type(got).__name__}"
        for i, (a, b) in enumerate(zip(got, exp)):
            b64 = exp64[i] if isinstance(exp64, (list, tuple)) and len(exp64) == len(exp) else None
            r = compare(a, b, b64, f"{path}[{i}]")
            if r:
                return r
        return None
    if isinstance(exp, (bool, int, float)):
        if isinstance(got, tl.Tensor):
            return f"{path}: expected a {type(exp).__name__}, got a Tensor"
        if isinstance(exp, float) and isinstance(got, float) and math.isclose(got, exp, rel_tol=1e-6, abs_tol=1e-9):
            return None
        if isinstance(exp, float) and math.isnan(exp) and isinstance(got, float) and math.isnan(got):
            return None
        return None if got == exp else f"{path}: {got!r} != {exp!r}"
    if exp is None:
        return None if got is None else f"{path}: expected None"
    return None  # other results (torch.Size, dtypes) are compared as Python values
    

def upcast(x):
    if isinstance(x, torch.Tensor) and x.dtype in (torch.float32, torch.float16, torch.bfloat16):
        return x.detach().double()
    if isinstance(x, torch.Tensor) and x.dtype == torch.complex64:
        return x.detach().to(torch.complex128)
    if isinstance(x, (list, tuple)):
        return type(x)(upcast(v) for v in x)
    if isinstance(x, dict):
        return {k: upcast(v) for k, v in x.items()}
    return x


# --------------------------------------------------------------- one sample

def random_sample(sample):
    """A sample that draws random numbers (dropout with p > 0): values cannot match.
    multi_head_attention_forward takes dropout_p as its 10th positional argument
    and draws only when `training`."""
    mha = "use_separate_proj_weight" in sample.kwargs and len(sample.args) > 9
    return any(sample.kwargs.get(k, 0) for k in ("dropout_p",)) or \
        (mha and bool(sample.kwargs.get("training", True)) and sample.args[9] > 0)


# OpInfos whose operator draws a random argument it also takes explicitly:
# the argument, drawn once by torch, goes to both libraries (torchlet's
# generator is not PyTorch's stream), so the samples compare the arithmetic
PINNED_RANDOM = {"nn.functional.fractional_max_pool2d": ("_random_samples", 2),
                 "nn.functional.fractional_max_pool3d": ("_random_samples", 3)}


def pin_random(op, sample):
    """The sample with its random argument drawn here (PINNED_RANDOM), else the sample."""
    if op.name not in PINNED_RANDOM or not isinstance(sample.input, torch.Tensor):
        return sample
    name, nd = PINNED_RANDOM[op.name]
    x = sample.input
    n_batch = 1 if x.dim() == nd + 1 else x.size(0)
    g = torch.Generator().manual_seed(20261205)
    u = torch.rand(n_batch, x.size(-nd - 1), nd, generator=g, dtype=torch.float64).to(x.dtype)
    return cmi.SampleInput(x, args=sample.args, kwargs={**sample.kwargs, name: u},
                           output_process_fn_grad=sample.output_process_fn_grad)


# singular vectors are defined up to sign: compared through what they determine
def _k(r):
    return r[1].shape[-1]


GAUGE = {"linalg.svd": lambda r: (r[1], (r[0][..., :_k(r)] * r[1].unsqueeze(-2)) @ r[2][..., :_k(r), :]),
         "svd": lambda r: (r[1], (r[0][..., :_k(r)] * r[1].unsqueeze(-2)) @ r[2][..., :_k(r)].mT),
         "linalg.eig": lambda r: (r[0], _projectors(r[1]))}


# eigenvectors are defined up to a phase (LAPACK: unit norm, largest component
# real, so a sign for real ones): compared through the projectors v v^H
def _projectors(V):
    W = V.transpose(-2, -1)
    return W.unsqueeze(-1) * W.conj().unsqueeze(-2)


def run_forward(op, fn, sample, dtype):
    """'pass' / 'skip' / a reason string."""
    if random_sample(sample):
        return "skip"
    args = (sample.input, *sample.args)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exp = op(*args, **sample.kwargs)
    except Exception:
        return "skip"  # PyTorch rejects it itself
    try:
        targs, tkw = to_tl(args), to_tl(sample.kwargs)
    except Unconvertible:
        return "skip"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = fn(*targs, **tkw)
    except Exception as e:  # noqa: BLE001  (every failure is a mismatch to report)
        return f"raised {type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}"
    if isinstance(exp, torch.Tensor) and exp.dtype not in DTYPES and exp.dtype not in CDTYPES:
        return "skip"
    exp64 = None
    if dtype in (torch.float32, torch.float16, torch.bfloat16, torch.complex64):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                exp64 = op(*upcast(args), **upcast(sample.kwargs))
        except Exception:
            exp64 = None
    gauge = GAUGE.get(op.name)
    if gauge is not None:
        try:
            got, exp = gauge(got), gauge(exp)
            exp64 = gauge(exp64) if exp64 is not None else None
        except Exception as e:  # noqa: BLE001
            return f"raised {type(e).__name__}: {e}"
    r = compare(got, exp, exp64)
    return "pass" if r is None else r


def _float_leaves(x):
    """the float64 outputs, complex128 ones as view_as_real (a real loss on both sides)"""
    if isinstance(x, torch.Tensor) and x.dtype == torch.complex128:
        return [torch.view_as_real(x.resolve_conj())]
    if isinstance(x, tl.Tensor) and x.dtype is tl.complex128:
        return [tl.view_as_real(x)]
    if isinstance(x, (torch.Tensor, tl.Tensor)):
        return [x] if x.dtype in (torch.float64, tl.float64) else []
    if isinstance(x, (list, tuple)):
        return [t for v in x for t in _float_leaves(v)]
    return []


def _grad_inputs(x):
    if isinstance(x, (torch.Tensor, tl.Tensor)):
        return [x] if x.requires_grad else []
    if isinstance(x, (list, tuple)):
        return [t for v in x for t in _grad_inputs(v)]
    if isinstance(x, dict):
        return [t for v in x.values() for t in _grad_inputs(v)]
    return []


def _process_tl(post, out):
    """PyTorch's output_process_fn_grad on torchlet outputs (torch means torchlet inside it)."""
    if isinstance(post, types.FunctionType) and (post.__module__ or "").startswith("torch.testing") \
            and post.__code__.co_name != "<lambda>" or post.__code__.co_names:
        g = dict(post.__globals__)
        g["torch"] = tl
        post = types.FunctionType(post.__code__, g, post.__name__, post.__defaults__, post.__closure__)
    return post(out)


def run_backward(op, fn, sample):
    """Gradients of sum(outputs) on a float64 sample: 'pass' / 'skip' / a reason.
    The sample's output_process_fn_grad (PyTorch's gauge-invariant view of,
    e.g., singular vectors) is applied to both outputs first."""
    if random_sample(sample):
        return "skip"
    args = (sample.input, *sample.args)
    post = sample.output_process_fn_grad
    try:
        out = post(op(*args, **sample.kwargs))
        leaves = _float_leaves(out)
        ins = _grad_inputs((args, sample.kwargs))
        if not leaves or not ins or not any(t.requires_grad for t in leaves):
            return "skip"
        exp = torch.autograd.grad(sum(t.sum() for t in leaves), ins, allow_unused=True)
    except Exception:
        return "skip"
    try:
        targs, tkw = to_tl(args, True), to_tl(sample.kwargs, True)
    except Unconvertible:
        return "skip"
    try:
        got_out = _process_tl(post, fn(*targs, **tkw))
        tleaves = [t for t in _float_leaves(got_out) if t.requires_grad]
        tins = _grad_inputs((targs, tkw))
        if not tleaves:
            return "output does not require grad"
        total = tleaves[0].sum()
        for t in tleaves[1:]:
            total = total + t.sum()
        got = tl.autograd.grad(total, tins, allow_unused=True)
    except Exception as e:  # noqa: BLE001
        return f"backward raised {type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}"
    for i, (g, e) in enumerate(zip(got, exp)):
        if e is None and g is None:
            continue
        if e is None:
            e = torch.zeros_like(ins[i])
        if g is None:
            g = tl.zeros_like(tins[i])
        if not np.allclose(to_np(g), to_np(e), rtol=1e-5, atol=1e-7, equal_nan=True):
            return f"grad[{i}] differs"
    return "pass"


def check_op(op, grad=True):
    """(forward counts, backward counts, mismatches); counts = [passed, total]."""
    fn = callable_for(op)
    fwd, bwd, bad = [0, 0], [0, 0], []
    for dtype in sorted(op.supported_dtypes("cpu"), key=str):
        if dtype not in DTYPES and not (dtype in CDTYPES and runs_complex(op)):
            continue
        try:
            samples = list(op.sample_inputs("cpu", dtype, requires_grad=False))
        except Exception:
            continue
        for s in samples:
            r = run_forward(op, fn, pin_random(op, s), dtype)
            if r == "skip":
                continue
            fwd[1] += 1
            if r == "pass":
                fwd[0] += 1
            else:
                bad.append(f"{op.name}{'.' + op.variant_test_name if op.variant_test_name else ''} "
                           f"{str(dtype)[6:]} fwd: {r}")
    if grad and op.supports_autograd and torch.float64 in op.supported_dtypes("cpu"):
        try:
            samples = list(op.sample_inputs("cpu", torch.float64, requires_grad=True))
        except Exception:
            samples = []
        for s in samples:
            r = run_backward(op, fn, pin_random(op, s))
            if r == "skip":
                continue
            bwd[1] += 1
            if r == "pass":
                bwd[0] += 1
            else:
                bad.append(f"{op.name}{'.' + op.variant_test_name if op.variant_test_name else ''} float64 bwd: {r}")
    return fwd, bwd, bad


def _id(op):
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


_OPS = [op for op in cpu_opinfos() if resolve(op) is not None and not is_random(op)]


@pytest.mark.parametrize("op", _OPS, ids=_id)
def test_opinfo_samples(op):
    fwd, bwd, bad = check_op(op)
    assert not bad, "\n".join(bad[:20])


def report(names=(), grad=False):
    ops = cpu_opinfos()
    if names:
        ops = [op for op in ops if op.name in names or _id(op) in names]
    present = [op for op in ops if resolve(op) is not None]
    random_ = [op for op in present if is_random(op)]
    checked = [op for op in present if not is_random(op)]
    F, B, all_bad, ops_ok, ops_bwd_ok, ops_bwd = [0, 0], [0, 0], [], 0, 0, 0
    for op in checked:
        fwd, bwd, bad = check_op(op, grad)
        F[0] += fwd[0]
        F[1] += fwd[1]
        B[0] += bwd[0]
        B[1] += bwd[1]
        all_bad += bad
        ops_ok += fwd[0] == fwd[1]
        if bwd[1]:
            ops_bwd += 1
            ops_bwd_ok += bwd[0] == bwd[1]
    print(f"CPU OpInfos: {len(ops)} (op_db: {len(cmi.op_db)}); present in torchlet: {len(present)}"
          f" ({len(random_)} random, not compared); missing: {len(ops) - len(present)}")
    print(f"forward: {ops_ok} of {len(checked)} OpInfos match on every sample; samples {F[0]} / {F[1]}"
          f" ({100 * F[0] / max(F[1], 1):.1f}%)")
    if grad:
        print(f"backward (float64): {ops_bwd_ok} of {ops_bwd} OpInfos match on every sample; samples {B[0]} / {B[1]}"
              f" ({100 * B[0] / max(B[1], 1):.1f}%)")
    if all_bad:
        print(f"mismatches ({len(all_bad)}):")
        for b in all_bad:
            print("  " + b)
    if "--missing" in sys.argv:
        print("missing:", " ".join(sorted({_id(op) for op in ops if resolve(op) is None})))


if __name__ == "__main__":
    argv = [a for a in sys.argv[1:] if not a.startswith("--")]
    report(argv, grad="--grad" in sys.argv)
