"""torchlet.utils: PyTorch's torch.utils names that torchlet provides (dispatch modes:
_python_dispatch; the device context: _device)."""
