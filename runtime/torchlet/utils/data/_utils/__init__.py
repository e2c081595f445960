"""The DataLoader's machinery under PyTorch's module paths
(torch.utils.data._utils.collate / fetch / worker), which programs import to
extend collation (`collate`, `default_collate_fn_map`)."""
from . import collate, fetch, worker
from .worker import MP_STATUS_CHECK_INTERVAL

__all__ = ["MP_STATUS_CHECK_INTERVAL", "collate", "fetch", "worker"]
