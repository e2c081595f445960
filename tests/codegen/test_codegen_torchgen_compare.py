"""Saved variables compared with torchgen's (optional: needs torch 2.13 and the corpus).

torchgen finds saved variables with regular expressions over the formula
text; torchlet walks the formula's AST.  They agree on the vast majority of
entries; the known differences are all places where the regex sees a name
that is not a use of the variable: a member (``x.values()`` for an argument
named ``values``), a qualified callee (``at::real(grad)`` for ``real``), or
the inside of a string literal (``not_implemented("... reserve")``).
"""

from __future__ import annotations

import pytest
from cgtest_util import CORPUS, needs_corpus

torchgen_ld = pytest.importorskip("torchgen.packaged.autograd.load_derivatives")


def torchgen_saved() -> dict[tuple[str, str], set[str]]:
    from torchgen.api.types import SpecialArgName

    def name(v) -> str:
        n = v.nctype.name
        return n.name if isinstance(n, SpecialArgName) else n

    infos, _ = torchgen_ld.load_derivatives(
        str(CORPUS / "derivatives.yaml"), str(CORPUS / "native_functions.yaml"), str(CORPUS / "tags.yaml")
    )
    out = {}
    for per_key in infos.values():
        for key, info in per_key.items():
            out[(str(info.func.func), key)] = {name(v) for v in info.all_saved_inputs} | {name(v) for v in info.all_saved_outputs}
    return out


def compare(model) -> tuple[int, int, list]:
    theirs = torchgen_saved()
    same, total, diffs = 0, 0, []
    for e in model.derivatives:
        for key, info in e.infos.items():
            total += 1
            mine = set(info.saved_names)
            t = theirs.get((info.func.schema_text, key))
            if t == mine:
                same += 1
            else:
                diffs.append((e.text, key, sorted(mine - (t or set())), sorted((t or set()) - mine)))
    return same, total, diffs


@needs_corpus
def test_saved_variables_agree_with_torchgen(corpus_model):
    same, total, diffs = compare(corpus_model)
    for d in diffs:
        print("differs:", d)
    print(f"identical saved-variable sets: {same}/{total} = {same / total:.1%}")
    assert same / total >= 0.95
    # every difference is torchgen over-saving (a regex false positive), never torchlet missing a use
    for _, _, only_mine, only_theirs in diffs:
        assert only_mine == []


@needs_corpus
def test_autogen_variants_match_torchgen(corpus_model):
    """The variants synthesised for ``autogen:`` are exactly torchgen's generated functions."""
    from torchgen.gen import parse_native_yaml

    parsed = parse_native_yaml(str(CORPUS / "native_functions.yaml"), str(CORPUS / "tags.yaml"))
    theirs = sorted(str(f.func) for f in parsed.native_functions if "generated" in f.tags)
    mine = sorted(f.schema_text for f in corpus_model.functions if f.generated_from is not None)
    assert len(mine) == 517
    assert mine == theirs


@needs_corpus
def test_groups_match_torchgen(corpus_model):
    """Functional / inplace / mutable / out grouping agrees with torchgen's."""
    from torchgen.gen import get_grouped_native_functions, parse_native_yaml
    from torchgen.model import NativeFunctionsGroup

    parsed = parse_native_yaml(str(CORPUS / "native_functions.yaml"), str(CORPUS / "tags.yaml"))
    theirs = set()
    for g in get_grouped_native_functions(parsed.native_functions):
        if isinstance(g, NativeFunctionsGroup):
            theirs.add(tuple(sorted(str(f.func.name) for f in g.functions())))
    mine = {
        tuple(sorted(str(f.func.name) for f in g.functions()))
        for g in corpus_model.groups
        if g.functional is not None and g.out is not None
    }
    assert mine - theirs == set()
    # torchgen special-cases one schema by name (its "Note [bernoulli.p schema]"): it pairs
    # bernoulli.p(..., float p, ...) with bernoulli_.float(..., float p=0.5, ...) although their
    # defaults differ; torchlet groups by signature only.
    assert theirs - mine == {("bernoulli.float_out", "bernoulli.p", "bernoulli_.float")}
