"""torchlet.utils: helpers that mirror torch.utils (the device context: _device)."""
