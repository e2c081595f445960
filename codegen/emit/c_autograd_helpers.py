"""The hand-written derivative helpers a formula may call
(autograd/tl_autograd_formulas.h): the overloaded ones listed by
parameter kinds (:data:`HELPERS`), every other ``tl_ag_<name>`` found in the
header by its name and C parameter types (:func:`header_helpers`).
"""

from __future__ import annotations

from dataclasses import dataclass

# C parameter kinds of the helpers (autograd/tl_autograd_formulas.h)
HELPERS: dict[str, list[tuple[tuple[str, ...], str]]] = {
    "handle_r_to_c": [(("dtype", "tensor"), "tl_ag_handle_r_to_c")],
    "maybe_multiply": [(("tensor", "scalar"), "tl_ag_maybe_multiply")],
    "sum_to": [(("tensor", "intlist"), "tl_ag_sum_to")],
    "at::sum_to": [(("tensor", "intlist"), "tl_ag_sum_to")],
    "mul_tensor_backward": [
        (("tensor", "tensor", "dtype"), "tl_ag_mul_tensor_backward"),
        (("tensor", "scalar", "dtype"), "tl_ag_mul_tensor_backward_scalar"),
    ],
    "div_tensor_self_backward": [
        (("tensor", "tensor", "dtype"), "tl_ag_div_tensor_self_backward"),
        (("tensor", "scalar", "dtype"), "tl_ag_div_tensor_self_backward_scalar"),
        (("tensor", "tensor", "dtype", "optstr"), "tl_ag_div_tensor_self_backward_mode"),
        (("tensor", "scalar", "dtype", "optstr"), "tl_ag_div_tensor_self_backward_scalar_mode"),
    ],
    "div_tensor_other_backward": [
        (("tensor", "tensor", "tensor"), "tl_ag_div_tensor_other_backward"),
        (("tensor", "tensor", "tensor", "optstr"), "tl_ag_div_tensor_other_backward_mode"),
    ],
    "sum_backward": [(("tensor", "intlist", "optintlist", "bool"), "tl_ag_sum_backward")],
    "mm_mat1_backward": [(("tensor", "tensor", "intlist", "intlist", "layout", "scalar"), "tl_ag_mm_mat1_backward")],
    "mm_mat2_backward": [(("tensor", "tensor", "intlist", "intlist", "layout", "scalar"), "tl_ag_mm_mat2_backward")],
    "permute_backwards": [(("tensor", "intlist"), "tl_ag_permute_backwards")],
    "unsqueeze_to": [
        (("tensor", "intlist"), "tl_ag_unsqueeze_to"),
        (("tensor", "int", "intlist"), "tl_ag_unsqueeze_to_dim"),
        (("tensor", "intlist", "intlist"), "tl_ag_unsqueeze_to_dims"),
    ],
    "slice_backward_wrapper": [(("tensor", "intlist", "int", "optint", "optint", "int"), "tl_ag_slice_backward_wrapper")],
    "_to_copy_backward": [(("tensor", "options"), "tl_ag_to_copy_backward")],
    "as_strided_backward": [(("tensor", "geometry", "intlist", "intlist", "optint"), "tl_ag_as_strided_backward")],
}

# ------------------------------------------- helpers from the C header

@dataclass(frozen=True)
class HeaderHelper:
    cname: str
    kinds: tuple[str, ...]
    ret: str  # tensor | tensorlist | tupleN


# C parameter types of tl_autograd_formulas.h (spaces around '*' removed) -> value kinds, pairs first
_C_PAIRS = [
    (("const int64_t*", "int64_t"), "optintlist"),
    (("int64_t", "bool"), "optint"),
    (("double", "bool"), "optdouble"),
    (("bool", "bool"), "optbool"),
    (("tl_tensor*const*", "int64_t"), "tensorlist"),
    (("const bool*", "int64_t"), "boolarray"),
    (("const tl_dtype*", "int64_t"), "dtypelist"),
    (("tl_dtype", "int"), "options"),  # x.options(): dtype, device
]
_C_SINGLE = {"tl_tensor*": "tensor", "tl_scalar": "scalar", "const tl_scalar*": "optscalar", "tl_dtype": "dtype",
             "int64_t": "int", "double": "double", "bool": "bool", "const char*": "optstr"}  # fmt: skip


def parse_helper(ret: str, name: str, params: str) -> HeaderHelper | None:
    import re

    types, names = [], []
    for p in params.split(","):
        m = re.match(r"^(.*[\s*])(\w+)$", p.strip())
        if not m:
            return None
        types.append(re.sub(r"\s*\*\s*", "*", " ".join(m.group(1).split())).strip())
        names.append(m.group(2))
    out_ret = "tensor"
    if ret == "int":
        if types[-2:] == ["tl_tensor***", "int64_t*"]:
            out_ret, types = "tensorlist", types[:-2]
        else:
            n = 0
            while types and types[-1] == "tl_tensor**":
                n, types = n + 1, types[:-1]
            if n < 2:
                return None
            out_ret = f"tuple{n}"
    kinds: list[str] = []
    i = 0
    while i < len(types):
        if tuple(types[i : i + 3]) == ("const int64_t*const*", "const int64_t*", "int64_t"):
            kinds.append("sizeslist")
            i += 3
            continue
        pair = tuple(types[i : i + 2])
        k = next((k for tys, k in _C_PAIRS if tys == pair), None)
        if k in ("optint", "optdouble", "optbool") and not names[i + 1].endswith("_has"):
            k = None  # `int64_t dim, bool keepdim`: two arguments; `int64_t x, bool x_has`: an int?
        if k is not None:
            kinds.append(k)
            i += 2
            continue
        if types[i] not in _C_SINGLE:
            return None
        kinds.append(_C_SINGLE[types[i]])
        i += 1
    return HeaderHelper(f"tl_ag_{name}", tuple(kinds), out_ret)


_HEADER_CACHE: dict[str, dict[str, HeaderHelper]] = {}


def header_helpers() -> dict[str, HeaderHelper]:
    """``tl_ag_<name>`` functions of autograd/tl_autograd_formulas.h by formula name:
    a helper written there is found without registering it here (parameters by C type:
    ``const int64_t *, int64_t`` an int list or None, ``int64_t, bool`` an int?, ...)."""
    import re
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "autograd/tl_autograd_formulas.h"
    key = str(path)
    if key not in _HEADER_CACHE:
        found: dict[str, HeaderHelper] = {}
        text = re.sub(r"/\*.*?\*/", "", path.read_text() if path.exists() else "", flags=re.S)
        for m in re.finditer(r"(tl_tensor\s*\*|\bint)\s*tl_ag_(\w+)\s*\(([^;{]*?)\)\s*;", text):
            ret = "tensor" if m.group(1).startswith("tl_tensor") else "int"
            h = parse_helper(ret, m.group(2), m.group(3))
            if h is not None:
                found[m.group(2)] = h
        _HEADER_CACHE[key] = found
    return _HEADER_CACHE[key]

