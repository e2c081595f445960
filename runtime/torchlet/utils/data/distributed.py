"""DistributedSampler: each of num_replicas processes reads its own strided
share of the (optionally shuffled, per epoch) indices. torchlet has no
torch.distributed, so num_replicas and rank must be given."""
from __future__ import annotations

import math

import torchlet

from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False) -> None:
        if num_replicas is None or rank is None:
            # PyTorch asks torch.distributed for them; torchlet has no such package
            raise RuntimeError("Requires distributed package to be available")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            # the largest share every replica can have in full
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            # the same permutation on every replica: seeded by seed + epoch
            g = torchlet.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = torchlet.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if self.drop_last:
            indices = indices[:self.total_size]
        else:  # padded by repeating from the start, to a multiple of num_replicas
            padding = self.total_size - len(indices)
            indices += (indices * math.ceil(padding / len(indices)))[:padding] if padding > 0 else []
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Sets the epoch that, with seed, picks the shuffled order: call before each epoch."""
        self.epoch = epoch
