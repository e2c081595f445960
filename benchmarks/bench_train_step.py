"""One training step of each example model (examples/train_cnn.py: conv,
batch_norm, relu, max_pool, linear, cross_entropy, SGD; examples/
train_transformer_lm.py: embeddings, layer_norm, causal attention, GELU
MLP, cross_entropy, AdamW, gradient clipping) beside PyTorch: zero_grad,
forward, backward, clip (LM), optimizer step on a fixed batch, the models
built from the same initial state_dict. One and two threads, timed round
robin (`interleaved`): on a shared machine only the ratios mean something.
Ratio = torch's time / torchlet's time (above 1.0 torchlet is faster)."""
from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torchlet as tl  # noqa: E402

from _harness import machine_info, print_interleaved, thread_counts, torch  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _example(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _step(lib, mod, state, make_opt, loss_of, clip):
    model = mod.make_model(lib)
    if state is not None:
        model.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
    opt = make_opt(lib, model)
    x, y = next(mod.batches(1, 32))
    x, y = lib.tensor(x), lib.tensor(y)

    def step():
        opt.zero_grad()
        loss_of(lib, model, x, y).backward()
        if clip:
            lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    return step


def cases():
    cnn, lm = _example("train_cnn"), _example("train_transformer_lm")
    specs = {
        "CNN step (batch 32, 16x16)": (
            cnn, lambda lib, m: lib.optim.SGD(m.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4),
            lambda lib, m, x, y: lib.nn.functional.cross_entropy(m(x), y), False),
        "Transformer LM step (32 x 32 tokens)": (
            lm, lambda lib, m: lib.optim.AdamW(m.parameters(), lr=3e-3, weight_decay=0.1),
            lambda lib, m, x, y: lib.nn.functional.cross_entropy(m(x).reshape(-1, lm.VOCAB), y.reshape(-1)), True),
    }
    rows = {}
    for name, (mod, make_opt, loss_of, clip) in specs.items():
        state = mod.initial_state(torch) if torch is not None else None
        rows[name] = dict(torchlet=_step(tl, mod, state, make_opt, loss_of, clip))
        if torch is not None:
            rows[name]["torch"] = _step(torch, mod, state, make_opt, loss_of, clip)
    return rows


def main():
    for n in thread_counts([1, 2]):
        tl.set_num_threads(n)
        if torch is not None:
            torch.set_num_threads(n)
        print(f"# training steps of the example models, float32, {n} thread(s), {tl.get_cpu_capability()} "
              f"({machine_info()})")
        print_interleaved(cases(), rounds=5, width=38)


if __name__ == "__main__":
    main()
