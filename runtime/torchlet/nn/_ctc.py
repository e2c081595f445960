"""F.ctc_loss and nn.CTCLoss, PyTorch's Python (torch/nn/functional.py,
modules/loss.py) over the `ctc_loss` operator (kernels/native/ctc_loss.c).
Re-exported by torchlet.nn.functional and torchlet.nn."""
from __future__ import annotations

import torchlet
from torchlet._function_mode import GO as _GO, handle as _tf, watch as _tf_watch

from .layers import _Loss

_TF = 0  # active torch-function modes (torchlet._function_mode)
_tf_watch(globals())


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """The Connectionist Temporal Classification loss of log_probs [T, N, C] (or [T, C]) against padded
    [N, S] or concatenated targets; lengths as int sequences or tensors."""
    if _TF and (r_ := _tf(ctc_loss, locals())) is not _GO:
        return r_
    from .functional import _reduction_enum
    return torchlet.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, _reduction_enum(reduction),
                             zero_infinity)


class CTCLoss(_Loss):
    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                        self.zero_infinity)
