"""Random number generators (Philox-4x32-10 in C): torchlet.Generator,
manual_seed, initial_seed, seed. The random operators draw from them."""
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
            raise RuntimeError(f"Overflow when unpacking long long")
        lib.tl_generator_manual_seed(self._g, seed & _MASK)
        return self

    def initial_seed(self) -> int:
        return lib.tl_generator_initial_seed(self._g)

    def seed(self) -> int:
        return lib.tl_generator_seed_random(self._g)

    def get_state(self):
        from ._factory import tensor
        from ._dtype import uint8
        s = lib.tl_generator_initial_seed(self._g)
        o = lib.tl_generator_get_offset(self._g)
        raw = s.to_bytes(8, "little") + o.to_bytes(8, "little")
        return tensor(list(raw), dtype=uint8)

    def set_state(self, state):
        raw = bytes(state.tolist())
        if len(raw) != 16:
            raise RuntimeError(f"Expected a ByteTensor of 16 bytes for the generator state, got {len(raw)}")
        lib.tl_generator_manual_seed(self._g, int.from_bytes(raw[:8], "little"))
        lib.tl_generator_set_offset(self._g, int.from_bytes(raw[8:], "little"))
        return self

    def _next_u64(self) -> int:
        return lib.tl_generator_next_u64(self._g)

    def _next_double(self) -> float:
        return lib.tl_generator_next_double(self._g)


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
