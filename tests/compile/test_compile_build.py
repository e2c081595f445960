"""The build: eager's flags, the disk cache (a hit in a new process, a miss
when a formula's text changes), and eager execution with one warning when
no compiler works."""
import ast
import os
import pathlib
import subprocess
import sys
import warnings

import torchlet as torch
from torchlet._compile import build

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_flags_are_eagers():
    tree = ast.parse((ROOT / "setup.py").read_text())
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) \
                and node.targets[0].id in ("KERNEL_VARIANTS",):
            found[node.targets[0].id] = ast.literal_eval(node.value)
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) and node.targets[0].id == "COMMON":
            found["COMMON"] = [ast.literal_eval(e) for e in node.value.elts if isinstance(e, ast.Constant)]
    assert found["KERNEL_VARIANTS"] == build.KERNEL_VARIANTS
    assert [f for f in build.COMMON if not f.startswith("-W")] == found["COMMON"]


_PROG = """
import torchlet as torch
from torchlet._compile import build
f = torch.compile(lambda x: (x * 3 + 1).exp())
f(torch.randn(5))
print(f.last_entry.plan.compile_seconds > 0, f.last_entry.plan.so_path)
"""


def test_disk_cache_hits_in_a_new_process(tmp_path):
    env = dict(os.environ, TORCHLET_CACHE_DIR=str(tmp_path))
    first = subprocess.run([sys.executable, "-c", _PROG], capture_output=True, text=True, env=env, check=True)
    second = subprocess.run([sys.executable, "-c", _PROG], capture_output=True, text=True, env=env, check=True)
    built1, so1 = first.stdout.split()
    built2, so2 = second.stdout.split()
    assert built1 == "True" and built2 == "False" and so1 == so2


def test_editing_a_formula_changes_the_key(tmp_path, monkeypatch):
    src = "int f(void) { return 1; }\n"
    lib, so1, _ = build.build(src + "/* a */", [])
    fake_ufunc = tmp_path / "ufunc"
    fake_ufunc.mkdir()
    for p in build.INCLUDE_DIRS[0].glob("*.h"):
        (fake_ufunc / p.name).write_text(p.read_text())
    (fake_ufunc / "add.h").write_text((fake_ufunc / "add.h").read_text() + "\n/* edited */\n")
    monkeypatch.setattr(build, "INCLUDE_DIRS", (fake_ufunc, build.INCLUDE_DIRS[1]))
    monkeypatch.setattr(build, "_digest_cache", [])
    lib, so2, _ = build.build(src + "/* a */", [])
    assert so1 != so2


def test_no_compiler_runs_eagerly_with_one_warning(monkeypatch):
    from torchlet._compile import api
    monkeypatch.setenv("CC", "/nonexistent/cc")
    monkeypatch.setattr(build, "_digest_cache", [])
    monkeypatch.setattr(api, "_build_warned", [])
    monkeypatch.setattr(api, "_warn_once_build", api.warn_build_failure)
    f = torch.compile(lambda x: (x * 5).sin() + 2)
    x = torch.randn(6)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        y = f(x)
        torch.compile(lambda x: x * 7 - 1)(x)
    assert torch.allclose(y, (x * 5).sin() + 2)
    msgs = [str(m.message) for m in w if "runs eagerly" in str(m.message)]
    assert len(msgs) == 1 and "compiler" in msgs[0]




def test_generated_c_is_warning_free():
    def f(x, w, h, m):
        a = torch.softmax(x * w, -1)
        b = (x * x).sum(-1) + x.amax(-1)              # row outputs only
        c = (h * 2 + 1).exp()                          # float16
        d = torch.where(m, x, w) > 0                   # bool out, fixed-dtype input
        return a, b, c, d

    x, w = torch.randn(4, 9), torch.randn(9)
    h, m = torch.randn(4, 9).to(torch.float16), torch.randn(4, 9) > 0
    cf = torch.compile(f)
    with torch.no_grad():
        cf(x, w, h, m)
    src = pathlib.Path(cf.last_entry.plan.so_path).with_suffix(".c")
    r = subprocess.run([build.compiler(), *[a for a in build.flags() if a != "-shared"], "-Werror", "-fsyntax-only",
                        str(src)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
