"""torchlet.nn: the functional interface (torchlet.nn.functional), the
initialisers (torchlet.nn.init) and the Module machinery with the layers
built on them (Module, Parameter, Sequential, Linear, LayerNorm, RMSNorm,
Embedding, SiLU), as in PyTorch."""
from . import functional, init  # noqa: F401
from .modules import Embedding, LayerNorm, Linear, Module, Parameter, RMSNorm, Sequential, SiLU  # noqa: F401

__all__ = ["functional", "init", "Module", "Parameter", "Sequential", "Linear", "LayerNorm", "RMSNorm",
           "Embedding", "SiLU"]
