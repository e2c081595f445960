"""torch.utils.data's samplers: the order in which a DataLoader visits a
map-style dataset. The random ones draw from torchlet's generators in the
order PyTorch's do (a seed, then randperm / randint / multinomial)."""
from __future__ import annotations

import itertools

import torchlet

__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler", "SubsetRandomSampler",
           "WeightedRandomSampler"]

def _random_seed(generator=None) -> int:
    """PyTorch's seed for a sampler's fresh generator: one int64 random_() draw."""
    return int(torchlet.empty((), dtype=torchlet.int64).random_(generator=generator).item())


class Sampler:
    """Iterates over dataset indices (or index lists). No default __len__:
    len() of a sampler without one raises TypeError, as Python's protocols expect."""

    def __iter__(self):
        raise NotImplementedError

    def __class_getitem__(cls, item):
        return cls


class SequentialSampler(Sampler):
    def __init__(self, data_source) -> None:
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A permutation per pass (or num_samples draws with replacement); without a
    generator each iteration seeds a fresh one from the default generator."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        # the dataset may grow or shrink between iterations
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        if self.generator is None:
            generator = torchlet.Generator()
            generator.manual_seed(_random_seed())
        else:
            generator = self.generator
        if self.replacement:
            # drawn 32 at a time, as PyTorch's, so the streams line up
            for _ in range(self.num_samples // 32):
                yield from torchlet.randint(high=n, size=(32,), dtype=torchlet.int64, generator=generator).tolist()
            yield from torchlet.randint(high=n, size=(self.num_samples % 32,), dtype=torchlet.int64,
                                        generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from torchlet.randperm(n, generator=generator).tolist()
            yield from torchlet.randperm(n, generator=generator).tolist()[:self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order, without replacement."""

    def __init__(self, indices, generator=None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in torchlet.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


def _positive_int(name, value):
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{name} should be a positive integer value, but got {name}={value}")


def _bool_flag(name, value):
    if not isinstance(value, bool):
        raise ValueError(f"{name} should be a boolean value, but got {name}={value}")


class WeightedRandomSampler(Sampler):
    """num_samples indices drawn with probabilities proportional to weights (multinomial)."""

    def __init__(self, weights, num_samples, replacement=True, generator=None) -> None:
        _positive_int("num_samples", num_samples)
        _bool_flag("replacement", replacement)
        weights_tensor = torchlet.as_tensor(weights, dtype=torchlet.double)
        if len(weights_tensor.shape) != 1:
            raise ValueError("weights should be a 1d sequence but given "
                             f"weights have shape {tuple(weights_tensor.shape)}")
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        drawn = torchlet.multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator)
        yield from iter(drawn.tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Groups another sampler's indices into lists of batch_size (the last one
    shorter unless drop_last)."""

    def __init__(self, sampler, batch_size, drop_last) -> None:
        _positive_int("batch_size", batch_size)
        _bool_flag("drop_last", drop_last)
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        it = iter(self.sampler)
        while True:
            batch = list(itertools.islice(it, self.batch_size))
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield batch

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
