"""torchlet.backends: what the runtime knows about the machine it runs on."""
from . import cpu  # noqa: F401
