"""torchlet.nn: the functional interface (torchlet.nn.functional) and a few
modules (Module, Linear, LayerNorm, RMSNorm) built on it, as in PyTorch."""
from . import functional  # noqa: F401
from .modules import LayerNorm, Linear, Module, Parameter, RMSNorm, SiLU  # noqa: F401

__all__ = ["functional", "Module", "Parameter", "Linear", "LayerNorm", "RMSNorm", "SiLU"]
