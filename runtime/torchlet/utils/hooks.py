"""torch.utils.hooks.RemovableHandle: the handle a hook registration returns
(Module forward hooks, Optimizer step hooks); `remove()` drops the hook from
every dict it was registered in."""
from __future__ import annotations

import weakref


class RemovableHandle:
    next_id: int = 0

    def __init__(self, hooks_dict, *, extra_dict=None) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        extra = extra_dict if isinstance(extra_dict, (list, tuple)) else ([extra_dict] if extra_dict is not None
                                                                           else [])
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extra)

    def remove(self) -> None:
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            d = ref()
            if d is not None and self.id in d:
                del d[self.id]

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, type, value, tb) -> None:
        self.remove()
