"""A small CNN trained on synthetic images, written against PyTorch's API.

    python examples/train_cnn.py             # torchlet (import torchlet as torch)
    python examples/train_cnn.py --torch     # PyTorch itself
    python examples/train_cnn.py --compare   # both, from the same initial weights, loss by loss

The program below `train` never names torchlet: conv2d, batch_norm, relu,
max_pool2d, linear, cross_entropy, SGD with momentum and a StepLR schedule,
exactly as a PyTorch user writes them. --compare builds the model in PyTorch,
copies its state_dict into torchlet's (through numpy), feeds both the same
batches and prints each step's two losses.
"""
from __future__ import annotations

import argparse
import sys

import numpy as np


def make_model(torch):
    nn = torch.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            )
            self.head = nn.Linear(16 * 4 * 4, 10)

        def forward(self, x):
            return self.head(torch.flatten(self.features(x), 1))

    return Net()


def batches(steps: int, batch: int, seed: int = 0):
    """synthetic 16x16 images whose class sets the brightness of one quadrant"""
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        y = rng.integers(0, 10, batch)
        x = rng.standard_normal((batch, 1, 16, 16)).astype(np.float32) * 0.5
        for i, c in enumerate(y):
            r, q = divmod(int(c) % 4, 2)
            x[i, 0, r * 8:(r + 1) * 8, q * 8:(q + 1) * 8] += 0.2 * (1 + int(c) // 4)
        yield x, y.astype(np.int64)


def train(torch, steps: int = 100, batch: int = 32, state: dict | None = None, log=print) -> list[float]:
    torch.manual_seed(0)
    model = make_model(torch)
    if state is not None:
        model.load_state_dict({k: torch.tensor(v) for k, v in state.items()})
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=max(1, steps // 3), gamma=0.5)
    loss_fn = torch.nn.CrossEntropyLoss()
    losses = []
    model.train()
    for step, (x, y) in enumerate(batches(steps, batch)):
        opt.zero_grad()
        loss = loss_fn(model(torch.tensor(x)), torch.tensor(y))
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
        if log and (step % 20 == 0 or step == steps - 1):
            log(f"step {step:4d}  loss {losses[-1]:.4f}  lr {sched.get_last_lr()[0]:.4f}")
    model.eval()
    with torch.no_grad():
        x, y = next(batches(1, 256, seed=1))
        acc = (model(torch.tensor(x)).argmax(1) == torch.tensor(y)).float().mean().item()
    if log:
        log(f"eval accuracy {acc:.3f}")
    return losses


def initial_state(torch) -> dict:
    torch.manual_seed(0)
    return {k: v.detach().numpy().copy() for k, v in make_model(torch).state_dict().items()}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--torch", action="store_true", help="run PyTorch instead of torchlet")
    ap.add_argument("--compare", action="store_true", help="run both from the same weights, loss by loss")
    ap.add_argument("--steps", type=int, default=100)
    args = ap.parse_args()
    if args.compare:
        import torch as pt
        import torchlet
        state = initial_state(pt)
        a = train(torchlet, args.steps, state=state, log=None)
        b = train(pt, args.steps, state=state, log=None)
        for i, (x, y) in enumerate(zip(a, b)):
            if i % 10 == 0 or i == len(a) - 1:
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
