"""Runtime warnings reach Python from every binding (docs/PYTHON_BINDINGS.md,
"Warnings"): a kernel records a warning (tl__warn); the entry point's return
to Python reports it in the status it already returns (a parked result and
NULL, or status 1); the binding raises it as a UserWarning with PyTorch's text
at the caller's line. No per-operator list."""
from __future__ import annotations

import re
import threading
import warnings
from pathlib import Path

import numpy as np
import pytest
from api_helpers import caught, lineno

tl = pytest.importorskip("torchlet")

try:
    import torch
except ImportError:  # pragma: no cover - torch is optional
    torch = None

REPO = Path(__file__).resolve().parents[2]
DOF = ("var(): degrees of freedom is <= 0. Correction should be strictly less than the reduction factor "
       "(input numel divided by output numel).")


def torch_text(msg):
    """torch's TORCH_WARN text without its '(Triggered internally at ...)' suffix"""
    return re.sub(r" \(Triggered internally at .*\)$", "", msg)


def test_function_method_and_overload_dispatch_point_at_the_caller():
    x = tl.ones(1)
    calls = [lambda: (tl.var(x), lineno()),
             lambda: (x.var(), lineno()),
             lambda: (tl.var(x, 0), lineno()),
             lambda: (tl.var(x, dim=0, correction=1), lineno())]
    for call in calls:
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            r, line = call()
        assert [(str(w.message), w.category, w.filename, w.lineno) for w in ws] == [(DOF, UserWarning, __file__, line)]
        assert np.isnan(r.numpy()).all()


def helper_that_calls_var(x):
    return x.var(), lineno()


def test_points_at_the_innermost_caller_outside_torchlet():
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        _, line = helper_that_calls_var(tl.ones(1))
    assert [(w.filename, w.lineno) for w in ws] == [(__file__, line)]


@pytest.mark.skipif(torch is None, reason="torch not installed")
def test_texts_like_torch():
    cases = [
        (lambda m: m.var(m.ones(1)), "var"),
        (lambda m: m.std(m.ones(1)), "std"),
        (lambda m: m.var_mean(m.ones(1)), "var_mean"),
        (lambda m: m.std_mean(m.ones(2, 1), 1), "std_mean"),
        (lambda m: m.where(m.tensor([1, 0], dtype=m.uint8), m.ones(2), m.zeros(2)), "where"),
        (lambda m: m.add(m.ones(3), 1, out=m.empty(2)), "out= resize"),
    ]
    for fn, what in cases:
        _, got = caught(lambda: fn(tl))
        _, want = caught(lambda: fn(torch))
        if what == "where" and not want:
            continue  # TORCH_WARN_ONCE: torch warned earlier in this process (torchlet is re-armed per test)
        assert [m for m, *_ in got] == [torch_text(m) for m, *_ in want], what
        assert all(c is UserWarning for _, c, *_ in got), what


def test_several_outputs_and_out_and_inplace_paths():
    _, ws = caught(lambda: tl.var_mean(tl.ones(1)))
    assert [m for m, *_ in ws] == [DOF.replace("var()", "var_mean()")]
    out = tl.empty(2)
    _, ws = caught(lambda: tl.var(tl.ones(1), 0, out=out))
    assert DOF in [m for m, *_ in ws]
    y = tl.ones(4)
    _, ws = caught(lambda: y.index_put_((tl.tensor([1, 0, 1, 0], dtype=tl.uint8),), tl.tensor(5.0)))
    assert [m for m, *_ in ws] == ["indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead."]
    np.testing.assert_array_equal(y.numpy(), [5, 1, 5, 1])


def test_warning_as_error_raises_and_leaves_nothing_pending():
    x = tl.ones(1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning, match=re.escape(DOF)):
            tl.var(x)
        with pytest.raises(UserWarning):
            tl.var_mean(x)
    assert tl._C.lib.tl_has_warning() == 0
    _, ws = caught(lambda: tl.ones(2) + 1)  # nothing left over for the next call
    assert ws == []


def test_warnings_of_a_failing_call_are_shown_before_its_error():
    """PyTorch's handler shows the warnings recorded before an error, then raises it"""
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError):
            # the deprecation is recorded, then the shapes fail
            tl.where(tl.tensor([1, 0, 1], dtype=tl.uint8), tl.ones(2), tl.zeros(2))
    assert any("uint8 condition" in str(w.message) for w in ws)
    assert tl._C.lib.tl_has_warning() == 0


def test_each_thread_reports_its_own():
    # warnings.catch_warnings is process-global, so one catcher in this thread
    # records which thread each warning was shown in (showwarning runs there).
    got = {i: [] for i in range(3)}
    barrier = threading.Barrier(3)

    def work(i):
        threading.current_thread().slot = i
        barrier.wait()
        tl.var(tl.ones(1))

    def show(message, *args, **kwargs):
        got[threading.current_thread().slot].append(str(message))

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = show
        ts = [threading.Thread(target=work, args=(i,)) for i in range(3)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    assert got == {i: [DOF] for i in range(3)}


def test_no_per_operator_list_every_direct_entry_is_wrapped():
    """every entry point a generated binding calls through cffi reports warnings:
    each `_C_<name>` used in _ops.py has its wrapper macro in python_abi.h"""
    ops = (REPO / "generated/python/_ops.py").read_text()
    hdr = (REPO / "generated/cdef/python_abi.h").read_text()
    called = set(re.findall(r"\b_C_(\w+)\(", ops))
    wrapped = set(re.findall(r"^#define tl_ops_(\w+)\(\.\.\.\) tl_pyabi_(?:tensor|rc)\(", hdr, re.M))
    assert called and called <= wrapped
    assert "WARNING_OPS" not in (REPO / "codegen/api_python.py").read_text()
    assert "_flush()" not in ops
