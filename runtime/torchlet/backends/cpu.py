"""torchlet.backends.cpu: the CPU the kernels run on and the store policy
derived from it (docs/UFUNC.md, "Stores").

    >>> torchlet.backends.cpu.get_cpu_capability()
    'AVX512'
    >>> print(torchlet.backends.cpu.describe())     # vendor, caches, policy
"""
from __future__ import annotations

from .._C import ffi as _ffi, lib as _lib
from .._errors import check as _check

_CAPABILITY_NAMES = {"default": "DEFAULT", "avx2": "AVX2", "avx512": "AVX512"}


def get_cpu_capability() -> str:
    """The kernels' instruction-set level, in PyTorch's spelling: 'DEFAULT', 'AVX2' or 'AVX512'."""
    name = _ffi.string(_lib.tl_cpu_capability_name(_lib.tl_cpu_capability())).decode()
    return _CAPABILITY_NAMES.get(name, name.upper())


def info() -> dict:
    """The machine (vendor, model, cache sizes in bytes, huge-page setting) and
    the store policy: `policy` in effect, `derived` what the rule picked from
    this machine (they differ only under TORCHLET_STREAM_MIN_BYTES /
    TORCHLET_COPY_STREAM_MIN_BYTES / TORCHLET_CPU_PREFETCH or
    set_store_policy)."""
    ci = _ffi.new("tl_cpu_info *")
    _check(_lib.tl_cpu_get_info(ci))

    def s(field) -> str:
        return _ffi.string(field).decode(errors="replace")

    return {
        "vendor": s(ci.vendor),
        "model": s(ci.model),
        "capability": get_cpu_capability(),
        "l1d_bytes": ci.l1d_bytes,
        "l2_bytes": ci.l2_bytes,
        "l2_shared_cpus": ci.l2_shared_cpus,
        "l3_bytes": ci.l3_bytes,
        "l3_shared_cpus": ci.l3_shared_cpus,
        "hypervisor": bool(ci.hypervisor),
        "cache_source": s(ci.cache_source),
        "huge_pages": s(ci.huge_pages),
        "policy": {"stream_min_bytes": ci.stream_min_bytes,
                   "copy_stream_min_bytes": ci.copy_stream_min_bytes,
                   "prefetch": bool(ci.prefetch)},
        "derived": {"stream_min_bytes": ci.derived_stream_min_bytes,
                    "copy_stream_min_bytes": ci.derived_copy_stream_min_bytes,
                    "prefetch": bool(ci.derived_prefetch)},
    }


def set_store_policy(*, stream_min_bytes: int | None = None, copy_stream_min_bytes: int | None = None,
                     prefetch: bool | None = None) -> None:
    """Overrides fields of the store policy for this process (None keeps one);
    for experiments and the calibration in benchmarks/bench_store_policy.py."""
    cur = info()["policy"]
    _check(_lib.tl_cpu_set_store_policy(
        cur["stream_min_bytes"] if stream_min_bytes is None else int(stream_min_bytes),
        cur["copy_stream_min_bytes"] if copy_stream_min_bytes is None else int(copy_stream_min_bytes),
        int(cur["prefetch"] if prefetch is None else bool(prefetch))))


def _mib(n: int) -> str:
    if n <= 0:
        return "unknown"
    return f"{n / 2**20:g} MiB" if n >= 2**20 else f"{n / 2**10:g} KiB"


def describe() -> str:
    """One paragraph: the machine and the store policy, for benchmark headers."""
    i = info()
    p = i["policy"]
    line = (f"{i['model']} ({i['vendor']}, {i['capability']}), L1d {_mib(i['l1d_bytes'])}, "
            f"L2 {_mib(i['l2_bytes'])}, L3 {_mib(i['l3_bytes'])} shared by {i['l3_shared_cpus']} cpus "
            f"({i['cache_source']}{', under a hypervisor' if i['hypervisor'] else ''}), huge pages: {i['huge_pages']}; "
            f"store policy: stream from {_mib(p['stream_min_bytes'])} moved, "
            f"copy streams from {_mib(p['copy_stream_min_bytes'])}, "
            f"prefetch {'on' if p['prefetch'] else 'off'}")
    if p != i["derived"]:
        line += " (overridden; the rule picked " + ", ".join(f"{k}={v}" for k, v in i["derived"].items()) + ")"
    return line
