"""The training examples (examples/train_cnn.py, examples/train_transformer_lm.py),
written against PyTorch's API: with torchlet their losses fall, and from the
same initial state_dict and batches they follow PyTorch's step by step
within float32 tolerance (when torch is installed)."""
import importlib.util
import sys
from pathlib import Path

import pytest

import torchlet

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("name, steps", [("train_cnn", 40), ("train_transformer_lm", 40)])
def test_loss_falls_with_torchlet(name, steps):
    losses = _load(name).train(torchlet, steps, log=None)
    assert len(losses) == steps
    first, last = sum(losses[:5]) / 5, sum(losses[-5:]) / 5
    assert last < 0.8 * first, (first, last)


@pytest.mark.parametrize("name, steps", [("train_cnn", 30), ("train_transformer_lm", 30)])
def test_losses_follow_pytorch_step_by_step(name, steps):
    torch = pytest.importorskip("torch")
    mod = _load(name)
    state = mod.initial_state(torch)
    ours = mod.train(torchlet, steps, state=state, log=None)
    theirs = mod.train(torch, steps, state=state, log=None)
    for step, (a, b) in enumerate(zip(ours, theirs)):
        assert abs(a - b) <= 1e-4 * abs(b), (step, a, b)
