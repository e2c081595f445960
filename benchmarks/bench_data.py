"""One epoch of a DataLoader over a TensorDataset (4,096 samples of 32
float32 features and an int64 label), batch 64, one process: torchlet's
DataLoader beside torch's (the same Python algorithm: sampler, per-sample
indexing, default_collate's stack), sequential and shuffled; and
default_collate alone on 64 samples. Timed round robin (`interleaved`): on
a shared machine only the ratios mean something. Ratio = torch's time /
torchlet's time (above 1.0 torchlet is faster)."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import torchlet as tl  # noqa: E402
import torchlet.utils.data  # noqa: E402,F401

from _harness import machine_info, print_interleaved, torch  # noqa: E402

if torch is not None:
    import torch.utils.data  # noqa: E402,F401

N, F, BATCH = 4096, 32, 64


def _epoch(lib, shuffle):
    rng = np.random.default_rng(0)
    ds = lib.utils.data.TensorDataset(lib.tensor(rng.standard_normal((N, F)).astype(np.float32)),
                                      lib.tensor(rng.integers(0, 10, N)))
    loader = lib.utils.data.DataLoader(ds, batch_size=BATCH, shuffle=shuffle)

    def run():
        for _ in loader:
            pass
    return run


def _collate(lib):
    rng = np.random.default_rng(0)
    samples = [(lib.tensor(rng.standard_normal(F).astype(np.float32)), int(i)) for i in range(BATCH)]
    collate = lib.utils.data.default_collate
    return lambda: collate(samples)


def cases():
    rows = {}
    for shuffle in (False, True):
        name = f"epoch {N}x{F}, batch {BATCH}{', shuffled' if shuffle else ''}"
        rows[name] = dict(torchlet=_epoch(tl, shuffle))
        if torch is not None:
            rows[name]["torch"] = _epoch(torch, shuffle)
    rows[f"default_collate, {BATCH} samples"] = dict(torchlet=_collate(tl))
    if torch is not None:
        rows[f"default_collate, {BATCH} samples"]["torch"] = _collate(torch)
    return rows


def main():
    tl.set_num_threads(1)
    if torch is not None:
        torch.set_num_threads(1)
    print(f"# DataLoader, one process, 1 thread ({machine_info()})")
    print_interleaved(cases(), rounds=5, width=38)


if __name__ == "__main__":
    main()
