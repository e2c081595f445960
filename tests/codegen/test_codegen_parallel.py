"""The emitters in worker processes (``torchlet-gen generate --jobs N``): the
same files and notes as in one process, and an author error raised in a
worker reaches the command line whole."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import codegen.emit as emit
from codegen.diagnostics import CodegenError, Diagnostic
from codegen.emit import EmitContext, emit_all
from codegen.model import Inputs, load_model
from codegen.templating import make_environment

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="worker processes are forked")


def context() -> EmitContext:
    model = load_model(Inputs(str(REPO / "yaml/native_functions.yaml"), str(REPO / "yaml/derivatives.yaml")))
    return EmitContext(model, make_environment(), ("yaml/native_functions.yaml", "yaml/derivatives.yaml"), "test")


def test_workers_emit_what_one_process_emits():
    serial_ctx, parallel_ctx = context(), context()
    serial = emit_all(serial_ctx, jobs=1)
    parallel = emit_all(parallel_ctx, jobs=3)
    assert list(parallel) == list(serial)
    assert parallel == serial
    assert parallel_ctx.notes == serial_ctx.notes


def test_an_author_error_in_a_worker_is_raised_whole(monkeypatch):
    diag = Diagnostic("yaml/native_functions.yaml", 12, 3, "unknown type 'Tensr'", "did you mean 'Tensor'?")

    def ok(ctx):
        ctx.notes.append("ok ran")
        return {"a.txt": "a"}

    def failing(ctx):
        raise CodegenError([diag])

    monkeypatch.setattr(emit, "_emitters", lambda: (ok, failing))
    ctx = context()
    with pytest.raises(CodegenError) as e:
        emit_all(ctx, jobs=2)
    assert e.value.diagnostics == (diag,)
    assert "did you mean 'Tensor'?" in e.value.render()


def test_notes_come_back_in_emitter_order(monkeypatch):
    def first(ctx):
        ctx.notes.append("first")
        return {"a.txt": "a"}

    def second(ctx):
        ctx.notes.append("second")
        return {"b.txt": "b"}

    monkeypatch.setattr(emit, "_emitters", lambda: (first, second))
    ctx = context()
    assert emit_all(ctx, jobs=2) == {"a.txt": "a", "b.txt": "b"}
    assert ctx.notes == ["first", "second"]
