"""F.triplet_margin_with_distance_loss and nn.TripletMarginWithDistanceLoss,
PyTorch's Python (torch/nn/functional.py, modules/loss.py): checks and
messages, the distance defaulting to the pairwise distance, `swap`, the
hinge `clamp_min(margin + d(a, p) - d(a, n), 0)` and the reduction.
Re-exported by torchlet.nn.functional and torchlet.nn."""
from __future__ import annotations

import torchlet
from torchlet._function_mode import GO as _GO, handle as _tf, watch as _tf_watch

from .loss import _Loss

_TF = 0  # active torch-function modes (torchlet._function_mode)
_tf_watch(globals())


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0,
                                      swap=False, reduction="mean"):
    if _TF and (r_ := _tf(triplet_margin_with_distance_loss, locals())) is not _GO:
        return r_
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a_dim, p_dim, n_dim = anchor.ndim, positive.ndim, negative.ndim
    if not (a_dim == p_dim and p_dim == n_dim):
        raise RuntimeError(
            f"The anchor, positive, and negative tensors are expected to have "
            f"the same number of dimensions, but got: anchor {a_dim}D, "
            f"positive {p_dim}D, and negative {n_dim}D inputs")
    if distance_function is None:
        from .functional import pairwise_distance as distance_function
    dist_pos = distance_function(anchor, positive)
    dist_neg = distance_function(anchor, negative)
    if swap:
        dist_swap = distance_function(positive, negative)
        dist_neg = torchlet.minimum(dist_neg, dist_swap)
    loss = torchlet.clamp_min(margin + dist_pos - dist_neg, 0)
    if reduction == "sum":
        return torchlet.sum(loss)
    if reduction == "mean":
        return torchlet.mean(loss)
    return loss


class TripletMarginWithDistanceLoss(_Loss):
    def __init__(self, *, distance_function=None, margin=1.0, swap=False, reduction="mean"):
        super().__init__(size_average=None, reduce=None, reduction=reduction)
        if margin <= 0:
            raise ValueError(
                f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} instead")
        if distance_function is None:
            from .functional import pairwise_distance as distance_function
        self.distance_function = distance_function
        self.margin = margin
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return triplet_margin_with_distance_loss(anchor, positive, negative,
                                                 distance_function=self.distance_function,
                                                 margin=self.margin, swap=self.swap, reduction=self.reduction)
