"""The generated stubs (generated/python/_ops.pyi) match the runtime bindings."""
import ast
import inspect
from pathlib import Path

import torchlet as tl
from torchlet._generated import _ops

STUB = Path(_ops.__file__).with_suffix(".pyi")


def _stub_tree():
    return ast.parse(STUB.read_text())


def _defs(body):
    out = {}
    for node in body:
        if isinstance(node, ast.FunctionDef):
            out.setdefault(node.name, []).append(node)
    return out


def test_stub_is_shipped_with_the_package():
    assert STUB.is_file()
    assert (Path(tl.__file__).parent / "py.typed").is_file()


# torchlet functions that wrap their generated binding in Python, like PyTorch's
# hand-written bindings (nonzero's as_tuple=, cat([]): runtime/torchlet/_missing_ops.py;
# the *tensors forms: runtime/torchlet/_tensor_api.py; unique_consecutive's outputs, block_diag(*tensors):
# runtime/torchlet/_select_api.py)
HAND_WRAPPED = {"nonzero", "cat", "broadcast_tensors", "meshgrid", "atleast_1d", "atleast_2d", "atleast_3d",
                "cartesian_prod", "unique_consecutive", "block_diag"}
HAND_WRAPPED |= {"einsum", "tensordot", "cdist"}  # torch/functional.py's front ends (_products.py)


def test_every_function_and_method_has_a_stub():
    tree = _stub_tree()
    funcs = _defs(tree.body)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "_TensorOps")
    meths = _defs(cls.body)
    for name in _ops.__all__:
        assert name in funcs, name
        if name in HAND_WRAPPED:
            assert getattr(tl, name).__wrapped__ is getattr(_ops, name)
            continue
        assert getattr(tl, name) is getattr(_ops, name)
    nn_funcs = _defs(ast.parse(STUB.with_name("_nn.pyi").read_text()).body)
    linalg_funcs = _defs(ast.parse(STUB.with_name("_linalg.pyi").read_text()).body)
    special_funcs = _defs(ast.parse(STUB.with_name("_special.pyi").read_text()).body)
    for (kind, name), sigs in _ops.SIGNATURES.items():
        table = {"function": funcs, "nn": nn_funcs, "linalg": linalg_funcs, "special": special_funcs}.get(kind, meths)
        assert name in table, (kind, name)
        n_forms = len(sigs) + sum("tuple of ints" in s and s.count(",") == 0 for s in sigs)
        assert len(table[name]) >= len(sigs)
        if len(table[name]) > 1:  # overloads are marked
            assert all(any(getattr(d, "id", None) == "overload" for d in f.decorator_list) for f in table[name])
        assert n_forms >= 1
    for dunder in ("__add__", "__radd__", "__iadd__", "__mul__", "__neg__"):
        assert dunder in meths


def test_single_signature_parameters_match_runtime():
    funcs = _defs(_stub_tree().body)
    for name in _ops.__all__:
        stub = funcs[name]
        if len(stub) != 1:
            continue
        rt = inspect.signature(getattr(_ops, name))
        st = stub[0].args
        stub_names = [a.arg for a in st.args] + ([st.vararg.arg] if st.vararg else []) + [a.arg for a in st.kwonlyargs]
        rt_names = [p for p in rt.parameters if not p.startswith("_")]
        assert stub_names == rt_names, name


def test_stub_compiles_and_names_torchlet_types():
    text = STUB.read_text()
    compile(text, str(STUB), "exec")
    assert "def add(input: Tensor, other: Tensor | Number, *, alpha: Number = ..., out: Tensor | None = ...) -> Tensor" in text


def test_type_checker_uses_the_stubs(tmp_path):
    """mypy (when installed) sees generated functions, methods and dunders and
    flags bad calls, through the package layout a wheel installs."""
    import importlib.util
    import shutil
    import subprocess
    import sys

    if importlib.util.find_spec("mypy") is None:
        import pytest
        pytest.skip("mypy is not installed")
    repo = Path(__file__).resolve().parents[2]
    pkg = tmp_path / "torchlet"
    shutil.copytree(repo / "runtime/torchlet", pkg, ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    shutil.copytree(repo / "generated/python", pkg / "_generated", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "use.py").write_text(
        "import torchlet\n"
        "a = torchlet.ones(2, 3)\n"
        "b: torchlet.Tensor = torchlet.add(a, a, alpha=2)\n"
        "c = a.add_(b) + 2\n"
        "d = a.sum(0, keepdim=True)[0]\n"
        "bad = torchlet.add(a, 'x')\n"
        "bad2 = a.relu(3)\n")
    r = subprocess.run([sys.executable, "-m", "mypy", "--no-site-packages", "--no-incremental",
                        "--follow-imports=silent", "use.py"], cwd=tmp_path, capture_output=True, text=True,
                       env={"MYPYPATH": str(tmp_path), "PATH": "/usr/bin:/bin"})
    errors = [ln for ln in r.stdout.splitlines() if ln.startswith("use.py")]
    assert [ln.split(":")[1] for ln in errors] == ["6", "7"], r.stdout


def test_python_module_nn_functions_live_in_torchlet_C_nn():
    """entries with `python_module: nn` are bound in torchlet._C._nn (PyTorch's
    torch._C._nn), stubbed in _nn.pyi, and not exported as torchlet.<name>"""
    from torchlet._generated import _nn

    nn_names = [n for (k, n) in _ops.SIGNATURES if k == "nn"]
    assert nn_names and sorted(nn_names) == sorted(_nn.__all__)
    assert tl._C._nn is _nn
    stub = _defs(ast.parse(STUB.with_name("_nn.pyi").read_text()).body)
    for name in nn_names:
        assert name in stub, name
        assert name not in _ops.__all__, name
    assert "silu" in nn_names and not hasattr(tl, "silu")   # torch.silu does not exist either
