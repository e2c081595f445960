"""torchlet demo: `c = a + b`, layer by layer, everything computed live.

    1. YAML        the declarations of add (the generator's model, with file:line)
    2. binding     the generated Python function behind Tensor.__add__
    3. dispatch    key sets, the dispatch table of aten::add.Tensor, the CPU capability;
                   the same table from Python (torchlet.ops) and a custom operator added to it
    4. kernel      the generated C entry point, the structured kernel, the ufunc loops
    5. meta        the same add on meta tensors: shapes and dtypes, no data
    6. autograd    c = a * b + a: the graph, backward, gradients checked against numpy
    7. timing      a + b beside numpy and PyTorch (PyTorch optional)
    8. workload    a 2-layer MLP forward + backward, checked and timed
    9. seeds       Linear+bias, RMSNorm, Linear+SiLU, softmax, a Transformer block:
                   forward + backward beside PyTorch (examples/seed_workloads.py)
   10-12.          torchlet.compile, a PyTorch training program, complex dtypes + fft
   13. random      PyTorch's generator stream: manual_seed(0) gives PyTorch's numbers,
                   weights and DataLoader order

Run with `make demo` (generates, builds, runs). Runs in a few seconds; PyTorch is
optional (`make torch`).
"""
from __future__ import annotations

import contextlib
import importlib.util
import inspect
import math
import os
import re
import sys
import time

# timings compare one thread of each library: numpy's BLAS reads these at import
for _v in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # the generator (codegen/) lives at the repo root
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

import torchlet as tl  # noqa: E402

try:
    import torch
except Exception:  # absent or broken: every torch column is skipped
    torch = None

try:
    from _harness import timeit  # median of an auto-sized batch
except Exception:
    def timeit(fn, *, repeat=7, min_time=0.05):
        fn()
        n = 1
        while True:
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            dt = time.perf_counter() - t0
            if dt >= min_time or n >= 1 << 20:
                break
            n *= 8
        best = float("inf")
        for _ in range(repeat):
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            best = min(best, (time.perf_counter() - t0) / n)
        return best


def section(n, title):
    print(f"\n== {n}. {title}")


def rel(path):
    return os.path.relpath(path, ROOT)


def read_lines(path):
    with open(os.path.join(ROOT, path)) as f:
        return f.read().splitlines()


def fmt_t(s):
    if s < 1e-6:
        return f"{s * 1e9:8.0f} ns"
    if s < 1e-3:
        return f"{s * 1e6:8.1f} us"
    return f"{s * 1e3:8.2f} ms"


@contextlib.contextmanager
def single_thread():
    """Time one thread of torchlet and of PyTorch (numpy's BLAS: see the top of the file)."""
    before = tl.get_num_threads()
    tl.set_num_threads(1)
    tb = torch.get_num_threads() if torch is not None else None
    if torch is not None:
        torch.set_num_threads(1)
    try:
        yield
    finally:
        tl.set_num_threads(before)
        if torch is not None:
            torch.set_num_threads(tb)


# ---------------------------------------------------------------- 1. YAML
def show_yaml():
    section(1, "YAML: what declares add (read through the generator's model)")
    try:
        from codegen.model import Inputs, load_model
        model = load_model(Inputs("yaml/native_functions.yaml", "yaml/derivatives.yaml", "yaml/tags.yaml")
                           if os.path.exists(os.path.join(ROOT, "yaml/tags.yaml"))
                           else Inputs("yaml/native_functions.yaml", "yaml/derivatives.yaml"))
    except Exception as e:  # the demo still runs from an installed torchlet without codegen/
        print(f"  (generator model unavailable: {type(e).__name__}: {e})")
        return None
    wanted = ("add.Tensor", "add_.Tensor", "add.out")
    fns = {str(f.func.name): f for f in model.functions if str(f.func.name) in wanted}
    for name in wanted:
        f = fns[name]
        extra = []
        if f.structured:
            extra.append("structured")
        if f.structured_delegate is not None:
            extra.append(f"structured_delegate: {f.structured_delegate}")
        if f.tags:
            extra.append("tags: " + ",".join(f.tags))
        print(f"  {f.pos.path}:{f.pos.line}  {f.func}")
        if extra:
            print(f"      {'; '.join(extra)}")
        kernels = model.kernels(f)
        if kernels:
            print("      dispatch: " + ", ".join(f"{k}: {md.kernel}" for k, md in kernels.items()))
    d = model.derivative_of(fns["add.Tensor"])
    if d is not None:
        for key, info in d.infos.items():
            print(f"  {d.pos.path}:{d.pos.line}  {d.text}  -> node {info.op}")
            for der in info.derivatives:
                print(f"    {der.pos.path}:{der.pos.line}  {', '.join(der.var_names)}: {der.text}")
            for fw in info.forward_derivatives:
                print(f"    {fw.pos.path}:{fw.pos.line}  {', '.join(fw.var_names)} (forward): {fw.text}")
            saved = ", ".join(f"{s.name}={s.expr}" for s in info.all_saved_inputs)
            print(f"    saved for backward: {saved or '(nothing)'}")
    return model


# ---------------------------------------------------------------- 2. binding
def show_binding(a, b, model):
    section(2, "Python binding: what `a + b` calls")
    fn = tl.Tensor.__add__
    src_file = inspect.getsourcefile(fn)
    src, first = inspect.getsourcelines(fn)
    print(f"  Tensor.__add__ is {fn.__module__}.{fn.__qualname__}, "
          f"generated into {rel(src_file)}:{first} ({len(src)} lines)")
    for line in src[:15]:
        print("  | " + line.rstrip())
    if len(src) > 15:
        print(f"  | ... ({len(src) - 15} more)")
    text = "".join(src)
    mod_src = inspect.getsource(sys.modules[fn.__module__])
    for var in dict.fromkeys(re.findall(r"\b(_[CP]_\w+)\(", text)):
        m = re.search(rf"^{var}\s*=.*?\"(tl_\w+)\"", mod_src, re.M)
        print(f"  {var} -> C function {m.group(1) if m else '?'}")
    picked = []
    for f in (model.functions if model is not None else []):
        nm = f.func.name
        sym = f"tl_ops_{nm.name}_{nm.overload_name}" if nm.overload_name else f"tl_ops_{nm.name}"
        if re.search(rf"\b_C_{sym[len('tl_ops_'):]}\(", text):
            picked.append(str(nm))
    if picked:
        print(f"  overload picked (the binding calls its C entry point directly): {', '.join(picked)}; "
              "a Python number as `other` goes through the tl_pyabi_ helper of the same overload")
    print(f"  a + b = {a + b};  a + 2 = {a + 2};  tl.add(a, b, alpha=10) = {tl.add(a, b, alpha=10)}")


# ---------------------------------------------------------------- 3. dispatch
def show_dispatch(a):
    section(3, "Dispatcher: key sets, the table of aten::add.Tensor, the CPU capability")
    g = tl.tensor([1.0, 2.0], requires_grad=True)
    m = tl.empty(2, device="meta")
    print(f"  CPU tensor            {tl._C._dispatch_keys(a)}")
    print(f"  requires_grad tensor  {tl._C._dispatch_keys(g)}")
    print(f"  meta tensor           {tl._C._dispatch_keys(m)}")
    print("  tl._C._dispatch_dump_table('aten::add.Tensor'):")
    for line in tl._C._dispatch_dump_table("aten::add.Tensor").splitlines():
        if line.strip():
            print("    " + line)
    print("  (requires_grad is not a key: every CPU tensor carries AutogradCPU, like PyTorch.) The highest key,")
    print("  AutogradCPU, runs tl_autograd_add_Tensor: no input requires grad -> redispatch below autograd at once;")
    print("  otherwise record an AddBackward0 node first. ADInplaceOrView falls through; CPU runs the structured kernel.")
    caps = tl._supported_cpu_capabilities() if hasattr(tl, "_supported_cpu_capabilities") else "?"
    print(f"  kernels compiled for {caps}; this CPU uses '{tl.get_cpu_capability()}'; "
          f"{tl.get_num_threads()} thread(s)")
    show_operator_table(a)
    show_modes()


def show_operator_table(a):
    """The same table from Python: torchlet.ops, and a row added at run time."""
    op = tl.ops.aten.add.Tensor
    print(f"  From Python the row is tl.ops.aten.add.Tensor: {op!r}")
    print(f"    _schema: {op._schema}   tags: {[str(t) for t in op.tags]}")
    print(f"    tl.ops.aten.add.Tensor(a, a, alpha=2) = {op(a, a, alpha=2)}  (one boxed call through the dispatcher)")
    print(f"    tl.ops.aten.add.resolve(a, 2) -> {tl.ops.aten.add.resolve(a, 2)}  (exact types first)")

    @tl.library.custom_op("demo::scale2x", mutates_args=())
    def scale2x(x: tl.Tensor) -> tl.Tensor:
        return x * 2

    scale2x.register_fake(lambda x: tl.empty_like(x))
    scale2x.register_autograd(lambda ctx, g: g * 2)
    print("  A run-time row: @tl.library.custom_op('demo::scale2x', mutates_args=()) with a fake kernel and a backward")
    print(f"    schema inferred from the annotations: {tl.ops.demo.scale2x.default._schema}")
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    y = scale2x(x)
    y.sum().backward()
    print(f"    scale2x(x) = {y.detach()}, grad_fn {y.grad_fn.name()}, x.grad = {x.grad}")
    m = scale2x(tl.empty(4096, 8192, device="meta"))
    print(f"    on meta (the fake kernel): shape {tuple(m.shape)}, device {m.device}")
    table = [ln for ln in tl._C._dispatch_dump_table("demo::scale2x").splitlines() if "Python kernel" in ln]
    print("    its kernels: " + "; ".join(ln.split(" (Python")[0] for ln in table))
    checks = tl.library.opcheck(scale2x, (tl.randn(3, requires_grad=True),))
    print(f"    opcheck: {checks}")
    scale2x._destroy()


def show_modes():
    """The Python key from Python: a dispatch mode and fake tensors."""
    from torchlet._subclasses.fake_tensor import FakeTensorMode
    from torchlet.utils._python_dispatch import TorchDispatchMode

    class LogOps(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.log = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.log.append(str(func))
            return func(*args, **(kwargs or {}))

    x, w, W = tl.randn(4, 8), tl.randn(8), tl.randn(16, 8)
    with LogOps() as m:
        h = x * tl.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
        tl.nn.functional.silu(tl.nn.functional.linear(h, W))
    print("  A TorchDispatchMode sees each call below autograd (linear decomposed), RMSNorm + linear + silu:")
    print("    " + ", ".join(m.log))
    with FakeTensorMode():
        y = tl.nn.functional.silu(tl.empty(4, 128, 8192) @ tl.empty(8192, 28672))
    print(f"  FakeTensorMode: silu(empty(4, 128, 8192) @ empty(8192, 28672)) = {y!r}, no memory "
          f"(meta kernels, device {y.device})")


# ---------------------------------------------------------------- 4. kernel
def show_kernel():
    section(4, "Kernel: the generated C that runs")
    files = ["generated/csrc/ops_add.c", "generated/csrc/autograd_add.c",
             "generated/kernels/ufunc_add.c", "kernels/ufunc/add.h"]
    for path in files:
        if not os.path.exists(os.path.join(ROOT, path)):
            print(f"  {path}: (not present)")
            continue
        lines = read_lines(path)
        if path.endswith("ops_add.c"):
            pat = re.compile(r"^(?:static )?tl_tensor \*(tl_(?:ops|structured)_add_Tensor(?:_CPU|_Meta)?)\(")
            hits = [(i + 1, m.group(1)) for i, l in enumerate(lines) if (m := pat.match(l))]
            print(f"  {path} ({len(lines)} lines):")
            for ln, name in hits:
                print(f"    :{ln:<4} {name}")
            # the entry point's body: select a kernel, call it
            start = next((i for i, l in enumerate(lines) if l.startswith("tl_tensor *tl_ops_add_Tensor(")), None)
            if start is not None:
                for l in lines[start:start + 7]:
                    print("    | " + l)
        elif path.endswith("autograd_add.c"):
            names = sorted(set(re.findall(r"\b(tl_autograd_add_Tensor\w*)\(", "\n".join(lines))))
            print(f"  {path} ({len(lines)} lines): {', '.join(names[:4])}")
        elif path.endswith("ufunc_add.c"):
            loops = re.findall(r"TL_KNAME\((ufunc_add_\w+)\)\(", "\n".join(lines))
            dt = next((l.split("dtypes:", 1)[1].strip() for l in lines if "dtypes:" in l), "?")
            print(f"  {path} ({len(lines)} lines), compiled once per ISA variant:")
            print(f"    loops: {', '.join(dict.fromkeys(loops))}")
            print(f"    dtypes: {dt}")
        else:
            formula = [l for l in lines if l.startswith("#define")]
            print(f"  {path} (the only place add's arithmetic is written):")
            for l in formula:
                print("    " + l)


# ---------------------------------------------------------------- 5. meta
def show_meta():
    section(5, "Meta: the same add with no data (shape, dtype and broadcasting only)")
    a = tl.empty(1 << 20, 1, device="meta")
    b = tl.empty(1, 1 << 20, dtype=tl.float16, device="meta")
    c = a + b
    print(f"  a: {tuple(a.shape)} {a.dtype}, b: {tuple(b.shape)} {b.dtype}")
    print(f"  a + b -> {c}  shape {tuple(c.shape)}, dtype {c.dtype}, device {c.device}, "
          f"{c.numel():,} elements, no memory")
    print(f"  dispatch keys of the result: {tl._C._dispatch_keys(c)}")


# ---------------------------------------------------------------- 6. autograd
def show_autograd():
    section(6, "Autograd: c = a * b + a")
    rng = np.random.default_rng(0)
    an = rng.standard_normal(4).astype(np.float32)
    bn = rng.standard_normal(4).astype(np.float32)
    a = tl.tensor(an.tolist(), requires_grad=True)
    b = tl.tensor(bn.tolist(), requires_grad=True)
    c = a * b + a
    print(f"  c.grad_fn = {c.grad_fn}")
    print(f"  c.grad_fn.name() = {c.grad_fn.name()!r}")
    print(f"  c.grad_fn.next_functions = {c.grad_fn.next_functions}")
    mul = c.grad_fn.next_functions[0][0]
    if mul is not None:
        print(f"  {mul.name()}.next_functions = {mul.next_functions}")
    c.sum().backward()
    ga, gb = a.grad.numpy(), b.grad.numpy()
    print(f"  a.grad = {a.grad}   (expected b + 1)")
    print(f"  b.grad = {b.grad}   (expected a)")
    ok = np.allclose(ga, bn + 1, rtol=1e-6) and np.allclose(gb, an, rtol=1e-6)
    print(f"  matches numpy: {ok}")
    return ok


# ---------------------------------------------------------------- 7. timing
def show_timing():
    section(7, "Timing: a + b beside numpy and PyTorch (median per call, 1 thread of each)")
    with single_thread():
        _timing_rows()


def _timing_rows():
    rows = []
    # 1 element: per-call overhead
    a1n = np.ones(1, np.float32)
    b1n = np.ones(1, np.float32)
    a1, b1 = tl.from_numpy(a1n), tl.from_numpy(b1n)
    t = {"torchlet": timeit(lambda: a1 + b1), "numpy": timeit(lambda: a1n + b1n)}
    if torch is not None:
        a1t, b1t = torch.from_numpy(a1n), torch.from_numpy(b1n)
        t["torch"] = timeit(lambda: a1t + b1t)
    rows.append(("1 element", None, t))
    # 2^22 float32: bandwidth (3 x 16 MiB moved per call)
    n = 1 << 22
    rng = np.random.default_rng(0)
    an = rng.standard_normal(n).astype(np.float32)
    bn = rng.standard_normal(n).astype(np.float32)
    a, b = tl.from_numpy(an), tl.from_numpy(bn)
    assert np.array_equal((a + b).numpy(), an + bn)
    t = {"torchlet": timeit(lambda: a + b, repeat=5), "numpy": timeit(lambda: an + bn, repeat=5)}
    if torch is not None:
        at, bt = torch.from_numpy(an), torch.from_numpy(bn)
        t["torch"] = timeit(lambda: at + bt, repeat=5)
    rows.append(("2^22 float32", 3 * 4 * n, t))
    for name, nbytes, t in rows:
        cells = []
        for impl in ("torchlet", "numpy", "torch"):
            if impl in t:
                s = fmt_t(t[impl])
                if nbytes:
                    s += f" ({nbytes / t[impl] / 1e9:5.1f} GB/s)"
                cells.append(f"{impl} {s}")
        ratios = ", ".join(f"{k}/torchlet {t[k] / t['torchlet']:.2f}x" for k in ("numpy", "torch") if k in t)
        print(f"  {name:<13} " + " | ".join(cells))
        print(f"  {'':<13} {ratios}  (above 1: torchlet faster)")
    if torch is None:
        print("  (PyTorch not installed: `make torch` adds its column)")


# ---------------------------------------------------------------- 8. workload
def mlp_numpy(x, y, W1, b1, W2, b2):
    """Forward + hand-derived backward of sum((relu(x W1 + b1) W2 + b2 - y)^2)."""
    h_pre = x @ W1 + b1
    h = np.maximum(h_pre, 0)
    out = h @ W2 + b2
    diff = out - y
    loss = (diff * diff).sum()
    g_out = 2 * diff
    gW2 = h.T @ g_out
    gb2 = g_out.sum(0)
    g_h = g_out @ W2.T
    g_pre = g_h * (h_pre > 0)
    gW1 = x.T @ g_pre
    gb1 = g_pre.sum(0)
    return loss, (gW1, gb1, gW2, gb2)


def show_workload():
    section(8, "Workload: 2-layer MLP, forward + backward (mm, add, relu, sub, mul, sum, view; t inside mm's backward)")
    rng = np.random.default_rng(1)
    B, D, H, O = 64, 128, 256, 16
    xn = rng.standard_normal((B, D)).astype(np.float32)
    yn = rng.standard_normal((B, O)).astype(np.float32)
    params_n = [(rng.standard_normal((D, H)) / np.sqrt(D)).astype(np.float32),
                (rng.standard_normal(H) * 0.1).astype(np.float32),
                (rng.standard_normal((H, O)) / np.sqrt(H)).astype(np.float32),
                (rng.standard_normal(O) * 0.1).astype(np.float32)]
    x, y = tl.from_numpy(xn), tl.from_numpy(yn)
    params = [tl.from_numpy(p.copy()).requires_grad_() for p in params_n]

    def step_tl():
        W1, b1, W2, b2 = params
        for p in params:
            p.grad = None
        h = tl.mm(x, W1).add(b1).relu()
        out = tl.mm(h, W2) + b2
        d = (out - y).view(-1)  # a view: flattened, sharing storage
        loss = (d * d).sum()
        loss.backward()
        return loss

    loss = step_tl()
    print(f"  shapes: x {tuple(x.shape)}, W1 {tuple(params[0].shape)}, W2 {tuple(params[2].shape)}, "
          f"y {tuple(y.shape)}")
    print(f"  loss = {loss.item():.4f}, loss.grad_fn = {loss.grad_fn.name()}")
    ref_loss, ref_grads = mlp_numpy(xn, yn, *params_n)
    ok = bool(np.isclose(loss.item(), ref_loss, rtol=1e-4))
    for name, p, g in zip(("W1", "b1", "W2", "b2"), params, ref_grads):
        err = float(np.abs(p.grad.numpy() - g).max() / (np.abs(g).max() + 1e-12))
        ok &= err < 1e-4
        print(f"  d{name}: shape {tuple(p.grad.shape)}, max rel. error vs hand-derived numpy {err:.1e}")
    print(f"  gradients match numpy: {ok}")

    def step_np():
        return mlp_numpy(xn, yn, *params_n)

    with single_thread():
        t = _time_workload(step_tl, step_np, xn, yn, params_n, params)
    ok &= t.pop("_ok", True)
    print("  one training step (forward + backward), 1 thread each:")
    for k, v in t.items():
        print(f"    {k:<16} {fmt_t(v)}   {v / t['torchlet']:.2f}x torchlet's time")
    return ok


def show_seeds():
    section(9, "Seed workloads: forward + backward beside PyTorch (examples/seed_workloads.py)")
    # SEED_SMALL=1 shrinks the shapes (the demo test uses it); SEED_REPS sets the repeats
    os.environ.setdefault("SEED_REPS", "3")
    spec = importlib.util.spec_from_file_location("seed_workloads", os.path.join(ROOT, "examples", "seed_workloads.py"))
    seeds = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(seeds)
    return seeds.main() == 0


def show_compile():
    section(10, "torchlet.compile: RMSNorm captured at the dispatcher, fused into one C kernel from the formulas")

    def rms_norm(x, w):
        return x * tl.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w

    x, w = tl.randn(512, 1024), tl.randn(1024)
    compiled = tl.compile(rms_norm)
    with tl.no_grad():
        ex = tl.compiler.explain(rms_norm)(x, w)
        y, ye = compiled(x, w), rms_norm(x, w)
        t_eager = timeit(lambda: rms_norm(x, w), repeat=5)
        t_comp = timeit(lambda: compiled(x, w), repeat=5)
    print(f"  graph: {ex.op_count} operators -> {ex.kernel_count} kernel "
          f"({', '.join(name for name, _ in ex.groups)})")
    print(f"  trace {ex.compile_times['trace'] * 1e3:.0f} ms, build {ex.compile_times['build'] * 1e3:.0f} ms "
          "(0 when the disk cache had it)")
    src = compiled.kernels().splitlines()
    print("  a line of the kernel: " + next(line.strip() for line in src if "TL_UFUNC_mul(" in line))
    ok = bool(tl.allclose(y, ye, rtol=1e-5, atol=1e-6))
    print(f"  matches eager: {ok}; eager {fmt_t(t_eager)}, compiled {fmt_t(t_comp)} "
          f"({t_eager / t_comp:.2f}x), 512x1024 float32")
    return ok


def _time_workload(step_tl, step_np, xn, yn, params_n, params):
    t = {"torchlet": timeit(step_tl, repeat=5), "numpy (by hand)": timeit(step_np, repeat=5)}
    if torch is not None:
        xt, yt = torch.from_numpy(xn), torch.from_numpy(yn)
        pt = [torch.from_numpy(p.copy()).requires_grad_() for p in params_n]

        def step_torch():
            W1, b1, W2, b2 = pt
            for p in pt:
                p.grad = None
            h = torch.relu(xt @ W1 + b1)
            d = (h @ W2 + b2 - yt).view(-1)
            loss = (d * d).sum()
            loss.backward()
            return loss

        lt = step_torch()
        tok = all(np.allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-4, atol=1e-4) for p, q in zip(params, pt))
        print(f"  torch: loss {lt.item():.4f}, gradients match torchlet: {tok}")
        t["torch"] = timeit(step_torch, repeat=5)
        t["_ok"] = tok
    return t


def show_training():
    section(11, "Training: a PyTorch program (examples/train_cnn.py) run on torchlet, beside PyTorch")
    spec = importlib.util.spec_from_file_location("train_cnn", os.path.join(ROOT, "examples", "train_cnn.py"))
    cnn = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cnn)
    steps = 30
    try:
        import torch
    except ImportError:
        torch = None
    state = cnn.initial_state(torch) if torch is not None else None
    ours = cnn.train(tl, steps, state=state, log=None)
    print(f"  conv / batch_norm / relu / max_pool / linear / cross_entropy, SGD + StepLR, {steps} steps: "
          f"loss {ours[0]:.4f} -> {ours[-1]:.4f}")
    if torch is None:
        print("  (PyTorch is not installed: no step-by-step comparison)")
        return ours[-1] < ours[0]
    theirs = cnn.train(torch, steps, state=state, log=None)
    diff = max(abs(a - b) / abs(b) for a, b in zip(ours, theirs))
    print(f"  PyTorch from the same state_dict and batches: loss {theirs[0]:.4f} -> {theirs[-1]:.4f}; "
          f"largest per-step relative difference {diff:.1e} (one step's time: benchmarks/bench_train_step.py)")
    return diff < 1e-4


def show_fft():
    section(12, "Complex dtypes and torchlet.fft: a spectrum, checked against numpy.fft")
    t = tl.arange(64, dtype=tl.float64) / 64
    x = tl.sin(2 * math.pi * 5 * t) + 0.5 * tl.cos(2 * math.pi * 12 * t)
    spec = tl.fft.rfft(x)
    power = tl.view_as_real(spec).pow(2).sum(-1)  # |X|^2 through the (re, im) view
    peaks = tl.topk(power, 2).indices.sort().values.tolist()
    back = tl.fft.irfft(spec, n=64)
    ref = np.fft.rfft(x.numpy())
    ok = bool(np.allclose(spec.numpy(), ref)) and bool(tl.allclose(back, x)) and peaks == [5, 12]
    print(f"  rfft of sin(5 cycles) + cos(12 cycles): {spec.dtype}, shape {tuple(spec.shape)}, "
          f"peaks at bins {peaks}; spec[5] = {spec[5].item():.3f}")
    print(f"  equals numpy.fft.rfft: {bool(np.allclose(spec.numpy(), ref))}; irfft(rfft(x)) == x: "
          f"{bool(tl.allclose(back, x))}")
    return ok


# ---------------------------------------------------------------- 13. random
# what `torch.manual_seed(0)` followed by these lines prints under PyTorch 2.13
_TORCH_SEED0 = {
    "randn(3)": [1.5410, -0.2934, -2.1788],
    "Linear(3, 2).weight": [[-0.0512, 0.1528, -0.1745], [-0.1135, -0.5516, -0.3824]],
    "DataLoader order": [[5, 3, 7], [4, 2, 1], [0, 6]],
}


def show_random():
    section(13, "Random streams: PyTorch's CPU generator (MT19937) and kernels, so a seed gives PyTorch's numbers")
    from torchlet.utils.data import DataLoader, TensorDataset
    tl.manual_seed(0)
    x = tl.randn(3)
    w = tl.nn.Linear(3, 2).weight.detach()
    order = [b[0].tolist() for b in DataLoader(TensorDataset(tl.arange(8)), batch_size=3, shuffle=True)]
    got = {"randn(3)": x, "Linear(3, 2).weight": w, "DataLoader order": order}
    ok = True
    for name, want in _TORCH_SEED0.items():
        g = got[name]
        same = g == want if isinstance(g, list) else bool(np.allclose(g.numpy(), np.array(want), atol=5e-5))
        ok &= same
        shown = g if isinstance(g, list) else [round(float(v), 4) for v in g.numpy().ravel()]
        print(f"  manual_seed(0), then {name}: {shown}"
              f"  {'= PyTorch' if same else '!= PyTorch ' + str(want)}")
    return ok


def main():
    t0 = time.perf_counter()
    print(f"torchlet {tl.__version__}: walking `c = a + b` through every layer")
    a = tl.tensor([1.0, 2.0, 3.0])
    b = tl.tensor([10.0, 20.0, 30.0])
    model = show_yaml()
    show_binding(a, b, model)
    show_dispatch(a)
    show_kernel()
    show_meta()
    ok = show_autograd()
    show_timing()
    ok &= show_workload()
    ok &= show_seeds()
    ok &= show_compile()
    ok &= show_training()
    ok &= show_fft()
    ok &= show_random()
    print(f"\nDone in {time.perf_counter() - t0:.1f} s; all checks {'passed' if ok else 'FAILED'}.")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
