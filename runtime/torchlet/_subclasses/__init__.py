"""torchlet._subclasses: tensor subclasses built on the Python dispatch key (FakeTensor)."""
from .fake_tensor import FakeTensor, FakeTensorMode

__all__ = ["FakeTensor", "FakeTensorMode"]
