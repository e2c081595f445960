"""An operator library built against an installed torchlet, not its source
tree: torchlet's wheel is built (the object cache makes that a link), its
files installed into a folder of their own, and with only that folder ahead
of the dependencies on the path, the installed ``torchlet-gen`` builds the
worked example (examples/extension) from the C headers and generator inputs
the wheel carries (torchlet/include, codegen/data), the library imports and
runs forward and backward, and ``generate --check`` accepts the committed
generated folder (the installed generator fingerprints as the source)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "extension"
GEN_ARGS = ["--namespace", "myops", "--native-functions", str(EXAMPLE / "native_functions.yaml"),
            "--derivatives", str(EXAMPLE / "derivatives.yaml"), "--ufunc-dir", str(EXAMPLE / "ufunc")]


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert r.returncode == 0, f"{cmd}\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}"
    return r


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wheel")
    run([sys.executable, "-m", "pip", "wheel", "-q", "--disable-pip-version-check", "--no-build-isolation",
         "--no-deps", "-w", str(tmp / "dist"), str(ROOT)], cwd=ROOT)
    wheel, = (tmp / "dist").glob("torchlet-*.whl")
    site = tmp / "site"
    run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps",
         "--target", str(site), str(wheel)])
    # the installed folder first: ahead of the source tree's editable finder
    env = dict(os.environ, PYTHONPATH=str(site))
    return site, env


def test_the_wheel_carries_headers_and_generator_inputs(installed):
    site, env = installed
    code = ("import torchlet, codegen.paths as p, torchlet.utils.cpp_extension as c; "
            "print(torchlet.__file__); print(p.DATA); print(*c.include_paths(), sep='\\n')")
    lines = run([sys.executable, "-c", code], cwd=site.parent, env=env).stdout.split()
    assert all(line.startswith(str(site)) for line in lines), lines
    assert (site / "torchlet/include/generated/include/ops/add.h").is_file()
    assert (site / "codegen/data/yaml/native_functions.yaml").is_file()
    assert (site / "codegen/data/templates/c_ops.c.j2").is_file()


def test_a_library_builds_and_runs_against_the_installed_torchlet(installed, tmp_path):
    site, env = installed
    gen = [str(site / "bin" / "torchlet-gen")]
    out = tmp_path / "build"
    run([*gen, "build", *GEN_ARGS, "--sources", str(EXAMPLE / "kernels" / "rms_norm.c"), "--out", str(out)],
        cwd=ROOT, env=env)
    code = ("import torchlet, myops\n"
            "x = torchlet.tensor([1.0, -2.0, 3.0], requires_grad=True)\n"
            "y = myops.scale(x, 2.0)\n"
            "y.sum().backward()\n"
            "print(torchlet.__file__, y.tolist(), x.grad.tolist(), type(y.grad_fn).__name__)\n")
    r = run([sys.executable, "-c", code], cwd=tmp_path, env=dict(env, PYTHONPATH=f"{site}{os.pathsep}{out}"))
    where, rest = r.stdout.split(" ", 1)
    assert where.startswith(str(site))
    assert rest.strip() == "[2.0, -4.0, 6.0] [2.0, 2.0, 2.0] ScaleBackward0"
    # the author's CI check, with the installed generator, on the committed folder
    run([*gen, "generate", "--check", *GEN_ARGS, "--out", str(EXAMPLE / "generated")], cwd=ROOT, env=env)
