"""torchlet.signal: PyTorch's torch.signal (the window functions)."""
from . import windows

__all__ = ["windows"]
