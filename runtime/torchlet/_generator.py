"""Random number generators: torchlet.Generator, manual_seed, initial_seed,
seed, get_rng_state / set_rng_state. The C generator is PyTorch's CPU one
(MT19937 with PyTorch's seeding and cached normals, runtime/src/generator.c):
the random operators draw PyTorch's numbers, and a state from
torch.get_rng_state() loads here (and back)."""
from __future__ import annotations

from . import _device as _dev
from ._C import ffi, lib

_MASK = (1 << 64) - 1


class Generator:
    __slots__ = ("_g", "device")

    def __init__(self, device="cpu"):
        self.device = _dev.as_device(device)
        if self.device.type != "cpu":
            raise RuntimeError(f"Generator: only cpu generators are supported, got {self.device}")
        self._g = ffi.gc(lib.tl_generator_new(67280421310721), lib.tl_generator_free)

    @classmethod
    def _default(cls):
        g = cls.__new__(cls)
        g.device = _dev.CPU
        g._g = lib.tl_default_generator()
        return g

    def manual_seed(self, seed):
        seed = int(seed)
        if not -(1 << 63) <= seed < (1 << 64):
            raise RuntimeError("Overflow when unpacking long long")
        lib.tl_generator_manual_seed(self._g, seed & _MASK)
        return self

    def initial_seed(self) -> int:
        return lib.tl_generator_initial_seed(self._g)

    def seed(self) -> int:
        return lib.tl_generator_seed_random(self._g)

    def get_state(self):
        import torchlet
        t = torchlet.empty(lib.tl_generator_state_size(), dtype=torchlet.uint8)
        lib.tl_generator_get_state(self._g, ffi.cast("uint8_t *", t.data_ptr()))
        return t

    def set_state(self, new_state):
        from ._dtype import uint8
        from ._tensor import Tensor
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        if new_state.dtype != uint8 or new_state.device.type != "cpu":
            raise TypeError("RNG state must be a torch.ByteTensor")
        raw = ffi.from_buffer("uint8_t[]", new_state.contiguous().numpy().tobytes())
        from ._errors import check
        check(lib.tl_generator_set_state(self._g, raw, new_state.numel()))
        return self

    def _random64(self) -> int:
        """one random64() draw (tests)"""
        lib.tl_generator_lock(self._g)
        try:
            return lib.tl_generator_random64(self._g)
        finally:
            lib.tl_generator_unlock(self._g)


default_generator = Generator._default()


def manual_seed(seed) -> Generator:
    return default_generator.manual_seed(seed)


def initial_seed() -> int:
    return default_generator.initial_seed()


def seed() -> int:
    return default_generator.seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)
