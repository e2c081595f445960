"""The operators' cffi wrappers split into shards (build_ffi.py) and put back
together as one `torchlet._C.lib` (torchlet/_clib.py)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import build_ffi  # noqa: E402

OPS_H = """#include <stdbool.h>
int tl_ops_register_all(void);
void tl_tensor_list_free(tl_tensor **list, int64_t n);

/* add */
tl_tensor *tl_ops_add_Tensor(tl_tensor *self, tl_tensor *other, tl_scalar alpha);
tl_tensor *tl_ops_add_out(tl_tensor *self, tl_tensor *other, tl_scalar alpha, tl_tensor *out);

/* mul */
tl_tensor *tl_ops_mul_Tensor(tl_tensor *self, tl_tensor *other);
"""
PYABI_H = """int tl_pyabi_add_out_r(tl_tensor *self, tl_tensor *other, tl_scalar alpha, tl_tensor *out);
int tl_pyabi_add_out_n_other_r(tl_tensor *self, tl_scalar other, tl_scalar alpha, tl_tensor *out);
#ifdef TL_PYABI_WRAP_ENTRIES
#define tl_ops_add_out(...) tl_pyabi_tensor(tl_ops_add_out(__VA_ARGS__))
#endif
"""


def names(text: str) -> set[str]:
    return set(re.findall(r"\b(tl_\w+)\s*\(", text))


def test_each_operator_goes_whole_to_its_shard_and_the_rest_to_the_base():
    base, shards = build_ffi.split_generated_cdef(OPS_H, PYABI_H)
    assert len(shards) == build_ffi.OPS_SHARDS
    assert names(base.cdef()) == {"tl_ops_register_all", "tl_tensor_list_free"}
    add, mul = build_ffi.shard_of("add"), build_ffi.shard_of("mul")
    assert {"tl_ops_add_Tensor", "tl_ops_add_out", "tl_pyabi_add_out_r", "tl_pyabi_add_out_n_other_r"} <= names(shards[add].cdef())
    assert "tl_ops_mul_Tensor" in names(shards[mul].cdef())
    everywhere = [n for part in (base, *shards) for n in names(part.cdef())]
    assert len(everywhere) == len(set(everywhere)) == 7  # each declaration once
    # the C source: the prototypes, then the macro wrapping add.out (only in add's shard), no other directive
    src = shards[add].c_source()
    assert src.index("tl_tensor *tl_ops_add_out(") < src.index("#define tl_ops_add_out(...)")
    assert "#define tl_ops_add_out" not in "".join(p.c_source() for k, p in enumerate(shards) if k != add)
    assert not [line for part in (base, *shards) for line in part.c_source().splitlines()
                if line.startswith("#") and not line.startswith("#define tl_ops_")]


def test_a_new_operator_changes_only_its_own_shard():
    _, before = build_ffi.split_generated_cdef(OPS_H, PYABI_H)
    _, after = build_ffi.split_generated_cdef(OPS_H + "\n/* probe */\ntl_tensor *tl_ops_probe(tl_tensor *self);\n",
                                              PYABI_H)
    changed = [k for k in range(build_ffi.OPS_SHARDS) if before[k].c_source() != after[k].c_source()]
    assert changed == [build_ffi.shard_of("probe")]


def test_the_shard_of_a_name_never_depends_on_the_process():
    # crc32, not hash(): the same split on every machine and every run (values pinned)
    assert [build_ffi.shard_of(n) for n in ("add", "mul", "conv2d")] == [7, 1, 1]


def test_torchlets_lib_finds_functions_in_every_shard():
    torchlet = pytest.importorskip("torchlet")
    from torchlet import _C

    lib = _C.lib
    assert lib.TL_OPS_SHARDS == build_ffi.OPS_SHARDS
    for k in range(lib.TL_OPS_SHARDS):
        assert f"torchlet._C_ops{k}" in sys.modules
    shard_mods = [sys.modules[f"torchlet._C_ops{k}"] for k in range(lib.TL_OPS_SHARDS)]
    assert all(hasattr(m.lib, "tl_ops_" + "add_Tensor") is (k == build_ffi.shard_of("add"))
               for k, m in enumerate(shard_mods))
    # a shard's function takes the base module's tensors (ffi.include shares the types)
    a = torchlet.tensor([1.0, 2.0])
    assert (a + a).tolist() == [2.0, 4.0]
    assert lib.tl_ops_add_Tensor is shard_mods[build_ffi.shard_of("add")].lib.tl_ops_add_Tensor
    assert lib.tl_tensor_release is _C.runtime_lib.tl_tensor_release
    assert "tl_ops_mul_Tensor" in dir(lib)
    with pytest.raises(AttributeError, match="no function or constant 'tl_no_such'"):
        lib.tl_no_such
