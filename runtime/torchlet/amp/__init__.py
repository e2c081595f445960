"""torchlet.amp: automatic mixed precision (PyTorch's torch.amp).

``torchlet.autocast`` (== ``torchlet.amp.autocast``) turns autocast on for a
device type; the cast policies are data (yaml/autocast.yaml), printable and
queryable with :func:`policy`.
"""
from __future__ import annotations

from .autocast_mode import autocast, autocast_decorator, is_autocast_available
from .policy import Policy, policy

__all__ = ["autocast", "autocast_decorator", "is_autocast_available", "policy", "Policy"]
