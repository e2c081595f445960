"""torchlet.optim: PyTorch's optimizers (Optimizer, SGD, Adam, AdamW, RMSprop,
Adagrad) over torchlet's in-place tensor ops, and the learning-rate
schedulers (torchlet.optim.lr_scheduler). See docs/OPTIM.md."""
from . import lr_scheduler  # noqa: F401
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]
