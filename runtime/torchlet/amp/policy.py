"""``torchlet.amp.policy(device_type)``: the autocast cast policies of a device
type as an object (generated from yaml/autocast.yaml)."""
from __future__ import annotations

from .._generated._autocast_policy import POLICIES, POLICY


class Policy:
    """The operators autocast casts on one device type, by policy.

    ``str(p)`` is a table (policy -> operators); ``p["fp32"]`` the overloads
    of a policy; ``p.policy_of("mm")`` the policy of an overload (None when it
    is not listed: it runs in its input dtypes); ``"mm" in p``.
    """

    __slots__ = ("device_type", "_by_policy", "_by_op")

    def __init__(self, device_type: str, by_policy: dict):
        self.device_type = device_type
        self._by_policy = {p: tuple(by_policy.get(p, ())) for p in POLICIES}
        self._by_op = {op: p for p, ops in self._by_policy.items() for op in ops}

    @property
    def policies(self) -> tuple:
        return tuple(POLICIES)

    def __getitem__(self, policy: str) -> tuple:
        if policy not in self._by_policy:
            raise KeyError(f"unknown autocast policy '{policy}' (expected one of: {', '.join(POLICIES)})")
        return self._by_policy[policy]

    def policy_of(self, op: str):
        return self._by_op.get(op[6:] if op.startswith("aten::") else op)

    def __contains__(self, op) -> bool:
        return self.policy_of(op) is not None

    def __iter__(self):
        return iter(self._by_op.items())

    def __len__(self) -> int:
        return len(self._by_op)

    def __str__(self) -> str:
        width = max(len(p) for p in POLICIES)
        lines = [f"autocast policy for {self.device_type} (yaml/autocast.yaml)"]
        for p, ops in self._by_policy.items():
            lines.append(f"  {p:<{width}}  {', '.join(ops) if ops else '-'}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"torchlet.amp.Policy({self.device_type!r}, {len(self)} operators)"


def policy(device_type: str) -> Policy:
    """The cast policies autocast applies on ``device_type`` ("cpu", "cuda")."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if device_type not in POLICY:
        raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
    return Policy(device_type, POLICY[device_type])
