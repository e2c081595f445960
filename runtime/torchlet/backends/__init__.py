"""torchlet.backends: what the runtime knows about the machine it runs on."""
from . import cpu  # noqa: F401
from . import mkldnn  # noqa: F401
