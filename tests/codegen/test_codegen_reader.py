"""YAML reading with positions."""

from __future__ import annotations

import yaml
from cgtest_util import CORPUS, needs_corpus

from codegen.diagnostics import DiagnosticSink
from codegen.reader import YList, YMap, load_yaml, load_yaml_text

TEXT = """\
# comment
- func: add(Tensor self) -> Tensor
  variants: function, method
  dispatch:
    CPU, CUDA: add_kernel
  flag: True
  n: 3
  none: null
  quoted: "a(b)"
  tags: [core, pointwise]
"""


def test_values_and_positions():
    sink = DiagnosticSink()
    data = load_yaml_text(TEXT, "f.yaml", sink)
    assert not sink
    assert isinstance(data, YList) and data.ipos(0).line == 2 and data.ipos(0).col == 3
    e = data[0]
    assert isinstance(e, YMap)
    assert e == {
        "func": "add(Tensor self) -> Tensor",
        "variants": "function, method",
        "dispatch": {"CPU, CUDA": "add_kernel"},
        "flag": True,
        "n": 3,
        "none": None,
        "quoted": "a(b)",
        "tags": ["core", "pointwise"],
    }
    assert (e.kpos("variants").line, e.kpos("variants").col) == (3, 3)
    assert (e.vpos("variants").line, e.vpos("variants").col) == (3, 13)
    assert e.vpos("func").at(4) == e.vpos("func").__class__("f.yaml", 2, 13, False)
    # quoted scalars: offsets count from the first character inside the quotes
    assert e.vpos("quoted").col == 11 and e.vpos("quoted").at(2).col == 14
    d = e["dispatch"]
    assert (d.kpos("CPU, CUDA").line, d.kpos("CPU, CUDA").col) == (5, 5)
    assert e["tags"].ipos(1).col == 16


def test_duplicate_keys_and_syntax_errors():
    sink = DiagnosticSink()
    load_yaml_text("- a: 1\n  a: 2\n", "f.yaml", sink)
    assert [str(d) for d in sink.diagnostics] == ["f.yaml:2:3: error: duplicate key 'a'\n  hint: the first 'a' is on line 1"]
    sink = DiagnosticSink()
    assert load_yaml_text("- a: [1, 2\n", "f.yaml", sink) is None
    assert sink.diagnostics[0].line == 2 and sink.diagnostics[0].message.startswith("invalid YAML: ")


def test_missing_file(tmp_path):
    sink = DiagnosticSink()
    assert load_yaml(tmp_path / "nope.yaml", sink, "nope.yaml") is None
    assert str(sink.diagnostics[0]).startswith("nope.yaml:1:1: error: cannot read file: ")


@needs_corpus
def test_values_match_pyyaml_on_the_corpus():
    for name in ("native_functions.yaml", "derivatives.yaml", "tags.yaml"):
        text = (CORPUS / name).read_text()
        sink = DiagnosticSink()
        assert load_yaml_text(text, name, sink) == yaml.load(text, Loader=yaml.CSafeLoader)
        assert not sink
