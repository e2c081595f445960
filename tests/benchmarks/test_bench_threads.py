"""The benchmarks' thread-count choice (benchmarks/_harness.py: thread_counts)
and the device script's syntax (benchmarks/device/run_cpu_bench.sh): the one
command the lead runs on the 16-core device machine must not fail on a typo."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from _harness import thread_counts  # noqa: E402


@pytest.fixture
def argv(monkeypatch):
    monkeypatch.delenv("TORCHLET_BENCH_THREADS", raising=False)

    def set_argv(*args):
        monkeypatch.setattr(sys, "argv", ["bench.py", *args])
    set_argv()
    return set_argv


def test_default_when_nothing_given(argv):
    assert thread_counts([1, 2]) == [1, 2]


def test_environment_then_command_line(argv, monkeypatch):
    monkeypatch.setenv("TORCHLET_BENCH_THREADS", "1,4,16")
    assert thread_counts([1, 2]) == [1, 4, 16]
    argv("--big", "--threads", "8")
    assert thread_counts([1, 2]) == [8]
    argv("--threads=3,5")
    assert thread_counts([1, 2]) == [3, 5]
    assert thread_counts([1, 2], "6") == [6]  # an argparse value wins


@pytest.mark.parametrize("spec", ["0", "1,x", ",", "-2"])
def test_bad_counts_stop_with_a_message(argv, spec):
    with pytest.raises(SystemExit, match="thread counts must be positive integers"):
        thread_counts([1], spec)


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_device_script_parses():
    script = ROOT / "benchmarks" / "device" / "run_cpu_bench.sh"
    r = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
