"""``torchlet.Tag`` and the tags of each operator (``OpOverload.tags``).

The tags of the generated operators are data the generator writes from
native_functions.yaml (generated/python/_op_tags.py); run-time operators keep
the tags given to ``Library.define`` / ``custom_op``. As in PyTorch every
aten operator also carries ``pt2_compliant_tag``.
"""
from __future__ import annotations

import enum

try:
    from ._generated._op_tags import ALL_TAGS as _YAML_TAGS, TAGS as _TAGS
except ImportError:  # a build without generated bindings
    _YAML_TAGS, _TAGS = (), {}

# PyTorch's tags.yaml entries that torchlet's operators do not use but users may name
_PYTORCH_TAGS = (
    "inplace_view", "pt2_compliant_tag", "view_copy", "dynamic_output_shape", "data_dependent_output",
    "generated", "nondeterministic_seeded", "nondeterministic_bitwise", "needs_exact_strides",
    "needs_contiguous_strides", "needs_fixed_stride_order", "flexible_layout", "core", "pointwise",
    "maybe_aliasing_or_mutating", "cudagraph_unsafe", "reduction", "inplace", "out", "out_variant",
)


class Tag(enum.Enum):
    """An operator tag (``torchlet.Tag.pointwise``)."""

    def __repr__(self):
        return f"<Tag.{self.name}: {self.value}>"

    def __str__(self):
        return f"Tag.{self.name}"


# numbered in alphabetical order, as PyTorch numbers them
Tag = Tag("Tag", [(n, i) for i, n in enumerate(sorted(set(_PYTORCH_TAGS) | set(_YAML_TAGS)))])

_runtime_tags: dict[str, list] = {}   # run-time operators: qualified name -> [Tag]


def set_tags(qualname: str, tags) -> None:
    _runtime_tags[qualname] = [t if isinstance(t, Tag) else Tag[str(t)] for t in tags]


def tags_of(qualname: str) -> list:
    if qualname in _runtime_tags:
        return list(_runtime_tags[qualname])
    if qualname.startswith("aten::"):
        return [Tag[t] for t in _TAGS.get(qualname, ())] + [Tag.pt2_compliant_tag]
    return []
