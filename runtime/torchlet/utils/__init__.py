"""torchlet.utils: PyTorch's torch.utils names that torchlet provides."""
