"""torchlet.utils: PyTorch's torch.utils names that torchlet provides (dispatch modes:
_python_dispatch; the device context: _device; datasets and DataLoader: data)."""
from . import data  # noqa: F401  (torchlet.utils.data, as torch.utils imports it)
