"""PyTorch's own files: every schema round-trips, every derivative binds."""

from __future__ import annotations

import json
import time

import yaml
from cgtest_util import CORPUS, needs_corpus, run_cli

from codegen.schema import parse_schema


@needs_corpus
def test_every_schema_round_trips():
    entries = yaml.load((CORPUS / "native_functions.yaml").read_text(), Loader=yaml.CSafeLoader)
    funcs = [e["func"] for e in entries]
    assert len(funcs) == 2584
    bad = [f for f in funcs if str(parse_schema(f)) != f]
    assert bad == []


@needs_corpus
def test_every_derivative_parses_and_binds(corpus_model):
    m = corpus_model
    assert len([f for f in m.functions if f.generated_from is None]) == 2584
    names = yaml.load((CORPUS / "derivatives.yaml").read_text(), Loader=yaml.CSafeLoader)
    assert len(m.derivatives) == len(names) == 687
    for e in m.derivatives:
        assert str(e.function.func) == str(parse_schema(e.text))
        assert e.infos
    n_formulas = sum(len(i.derivatives) + len(i.forward_derivatives) for e in m.derivatives for i in e.infos.values())
    assert n_formulas > 1000


@needs_corpus
def test_corpus_model_invariants(corpus_model):
    m = corpus_model
    for g in m.groups:
        sigs = {f.func.signature() for f in g.functions()}
        assert sigs == {g.signature}
    # every structured delegate resolves to a structured out= function
    by_name = {f.func.name: f for f in m.functions}
    for f in m.functions:
        if f.structured_delegate:
            assert by_name[f.structured_delegate].structured
    assert m.kernels(by_name[parse_schema("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor").name])["CPU"].kernel == "ufunc_add"


@needs_corpus
def test_inspect_on_corpus():
    start = time.perf_counter()
    r = run_cli("inspect", "--native-functions", str(CORPUS / "native_functions.yaml"), "--derivatives", str(CORPUS / "derivatives.yaml"))
    elapsed = time.perf_counter() - start
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert len(data["functions"]) >= 2584 and len(data["derivatives"]) == 687
    add = next(f for f in data["functions"] if f["schema"].startswith("add.Tensor("))
    assert add["kind"] == "functional" and add["structured_delegate"] == "add.out"
    assert add["dispatch"]["SparseCPU"] == "add_sparse"
    mul = next(d for d in data["derivatives"] if d["name"].startswith("mul.Tensor("))
    assert mul["formulas"]["self"] == "mul_tensor_backward(grad, other, self.scalar_type())"
    print(f"inspect on the corpus: {elapsed:.2f} s")  # informative; speed is measured in benchmarks/
