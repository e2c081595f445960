"""examples/demo.py (`make demo`) runs to the end, with and without PyTorch."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEMO = os.path.join(ROOT, "examples", "demo.py")

KEY_LINES = [
    "yaml/native_functions.yaml:",          # 1. the declarations, with file:line
    "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "AddBackward0",                          # 1. derivatives.yaml node, 6. grad_fn
    "_d__add__",                             # 2. the generated binding
    "aten::add.Tensor",                      # 3. the dispatch table
    "tl_structured_add_Tensor_CPU",
    "demo::scale2x(Tensor x) -> Tensor",     # 3. the table from Python, a custom operator
    "GeneratedBackwardFor_demo_scale2x_defaultBackward",
    "DispatchKeySet(Meta",
    "aten.t.default, aten.mm.default, aten.silu.default",   # 3. a dispatch mode
    "FakeTensor(..., size=(4, 128, 28672))",                # 3. fake tensors
    "generated/kernels/ufunc_add.c",         # 4. the kernel
    "#define TL_UFUNC_add",
    "device='meta'",                         # 5. meta
    "matches numpy: True",                   # 6. autograd
    "2^22 float32",                          # 7. timing
    "gradients match numpy: True",           # 8. workload
    "9. Seed workloads",                     # 9. seeds
    "transformer",
    "10. torchlet.compile",                 # 10. compile
    "6 operators -> 1 kernel (fused_pow_mean_add_rsqrt_mul_",
    "matches eager: True",
    "11. Training: a PyTorch program",       # 11. the CNN example
    "SGD + StepLR, 30 steps: loss",
    "all checks passed",
]


def _run(code_prefix=None):
    env = dict(os.environ, OMP_NUM_THREADS="1", SEED_SMALL="1", SEED_REPS="1")
    if code_prefix is None:
        cmd = [sys.executable, DEMO]
    else:
        cmd = [sys.executable, "-c",
               f"{code_prefix}; import runpy; runpy.run_path({DEMO!r}, run_name='__main__')"]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def _check(p):
    assert p.returncode == 0, f"demo exited {p.returncode}\nstdout:\n{p.stdout[-4000:]}\nstderr:\n{p.stderr[-4000:]}"
    for line in KEY_LINES:
        assert line in p.stdout, f"missing {line!r} in demo output:\n{p.stdout[-4000:]}"
    for n in range(1, 11):
        assert f"== {n}. " in p.stdout, f"section {n} missing"


def test_demo_runs():
    _check(_run())


def test_demo_without_torch():
    # `import torch` fails as if PyTorch were not installed: the demo skips its columns
    p = _run("import sys; sys.modules['torch'] = None")
    _check(p)
    assert "torch " not in p.stdout.split("== 7.", 1)[1].split("== 8.", 1)[0].replace("torchlet", "")
    assert "PyTorch not installed" in p.stdout


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
