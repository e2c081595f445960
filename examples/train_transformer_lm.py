"""A small Transformer language model trained on a synthetic token stream,
written against PyTorch's API.

    python examples/train_transformer_lm.py             # torchlet (import torchlet as torch)
    python examples/train_transformer_lm.py --torch     # PyTorch itself
    python examples/train_transformer_lm.py --compare   # both, from the same initial weights, loss by loss

Token and position embeddings, pre-norm blocks (layer_norm, causal
scaled_dot_product_attention over a fused qkv projection, a GELU MLP), a
linear head, cross_entropy, AdamW with a warmup + cosine LambdaLR schedule
and gradient clipping: the program below `train` never names torchlet.
--compare builds the model in PyTorch, copies its state_dict into torchlet's
(through numpy), feeds both the same batches and prints each step's two
losses.
"""
from __future__ import annotations

import argparse
import math
import sys

import numpy as np

VOCAB, T, D, HEADS, LAYERS = 64, 32, 64, 4, 2


def make_model(torch):
    nn, F = torch.nn, torch.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
            self.qkv, self.proj = nn.Linear(D, 3 * D), nn.Linear(D, D)
            self.fc, self.out = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)

        def forward(self, x):
            B, L, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(D, dim=2)
            q, k, v = (t.view(B, L, HEADS, D // HEADS).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).reshape(B, L, D))
            return x + self.out(F.gelu(self.fc(self.ln2(x))))

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(VOCAB, D), nn.Embedding(T, D)
            self.blocks = nn.ModuleList([Block() for _ in range(LAYERS)])
            self.ln, self.head = nn.LayerNorm(D), nn.Linear(D, VOCAB)

        def forward(self, idx):
            x = self.tok(idx) + self.pos(torch.arange(idx.shape[1]))
            for b in self.blocks:
                x = b(x)
            return self.head(self.ln(x))

    return LM()


def batches(steps: int, batch: int, seed: int = 0):
    """sequences from a fixed random bigram table: learnable, not trivial"""
    rng = np.random.default_rng(seed)
    table = np.random.default_rng(123).integers(0, VOCAB, (VOCAB, 3))
    for _ in range(steps):
        seq = np.empty((batch, T + 1), np.int64)
        seq[:, 0] = rng.integers(0, VOCAB, batch)
        for t in range(1, T + 1):
            seq[:, t] = table[seq[:, t - 1], rng.integers(0, 3, batch)]
        yield seq[:, :-1], seq[:, 1:]


def train(torch, steps: int = 200, batch: int = 16, state: dict | None = None, log=print) -> list[float]:
    torch.manual_seed(0)
    model = make_model(torch)
    if state is not None:
        model.load_state_dict({k: torch.tensor(v) for k, v in state.items()})
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, betas=(0.9, 0.95), weight_decay=0.1)
    warmup = max(1, steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / warmup if s < warmup else 0.5 * (1 + math.cos(math.pi * (s - warmup) / steps)))
    losses = []
    for step, (x, y) in enumerate(batches(steps, batch)):
        logits = model(torch.tensor(x))
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, VOCAB), torch.tensor(y).reshape(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(loss.item())
        if log and (step % 25 == 0 or step == steps - 1):
            log(f"step {step:4d}  loss {losses[-1]:.4f}  lr {sched.get_last_lr()[0]:.5f}")
    return losses


def initial_state(torch) -> dict:
    torch.manual_seed(0)
    return {k: v.detach().numpy().copy() for k, v in make_model(torch).state_dict().items()}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--torch", action="store_true", help="run PyTorch instead of torchlet")
    ap.add_argument("--compare", action="store_true", help="run both from the same weights, loss by loss")
    ap.add_argument("--steps", type=int, default=200)
    args = ap.parse_args()
    if args.compare:
        import torch as pt
        import torchlet
        state = initial_state(pt)
        a = train(torchlet, args.steps, state=state, log=None)
        b = train(pt, args.steps, state=state, log=None)
        for i, (x, y) in enumerate(zip(a, b)):
            if i % 20 == 0 or i == len(a) - 1:
                print(f"step {i:4d}  torchlet {x:.6f}  torch {y:.6f}")
        print(f"largest relative difference: {max(abs(x - y) / abs(y) for x, y in zip(a, b)):.2e}")
        return 0
    if args.torch:
        import torch
    else:
        import torchlet as torch
    train(torch, args.steps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
