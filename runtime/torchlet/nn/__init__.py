"""torchlet.nn: the functional interface (torchlet.nn.functional), the
initialisers (torchlet.nn.init), utilities (torchlet.nn.utils: gradient
clipping, parameter vectors) and the Module machinery with the layers built on
them (Module, Parameter, Sequential, ModuleList, ModuleDict, ParameterList,
ParameterDict, Linear, Conv1d / Conv2d / Conv3d,
ConvTranspose1d / ConvTranspose2d / ConvTranspose3d, LayerNorm, RMSNorm, Embedding, the activations,
Dropout, Flatten; activation.py and loss.py: the other activations and
losses; pooling.py, normalization.py, padding.py), as in PyTorch."""
from . import functional, init, utils  # noqa: F401
from .activation import (  # noqa: F401
    CELU, ELU, GLU, SELU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU, LogSigmoid, Mish, PReLU, ReLU6,
    RReLU, Softmin, Softplus, Softshrink, Softsign, Tanhshrink, Threshold,
)
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d  # noqa: F401
from .containers import ModuleDict, ModuleList, ParameterDict, ParameterList  # noqa: F401
from .layers import (  # noqa: F401
    GELU, CrossEntropyLoss, Dropout, Flatten, Identity, LogSoftmax, MSELoss, NLLLoss, ReLU, Sigmoid, Softmax, Tanh,
    Unflatten,
)
from .loss import (  # noqa: F401
    BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, GaussianNLLLoss, HingeEmbeddingLoss, HuberLoss, KLDivLoss,
    L1Loss, MarginRankingLoss, MultiLabelSoftMarginLoss, MultiMarginLoss, PoissonNLLLoss, SmoothL1Loss,
    SoftMarginLoss, TripletMarginLoss,
)
from .pooling import (  # noqa: F401
    AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveMaxPool1d, AdaptiveMaxPool2d, AvgPool1d, AvgPool2d, MaxPool1d, MaxPool2d,
)
from .normalization import (  # noqa: F401
    BatchNorm1d, BatchNorm2d, GroupNorm, InstanceNorm1d, InstanceNorm2d,
)
from .padding import (  # noqa: F401
    CircularPad1d, CircularPad2d, ConstantPad1d, ConstantPad2d, ReflectionPad1d, ReflectionPad2d, ReplicationPad1d,
    ReplicationPad2d, ZeroPad1d, ZeroPad2d,
)
from .modules import Embedding, LayerNorm, Linear, Module, Parameter, RMSNorm, Sequential, SiLU  # noqa: F401

__all__ = ["functional", "init", "utils", "Module", "Parameter", "Sequential", "ModuleList", "ModuleDict",
           "ParameterList", "ParameterDict", "Linear", "Conv1d", "Conv2d", "Conv3d",
           "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "LayerNorm", "RMSNorm", "Embedding", "SiLU", "ReLU", "GELU",
           "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "Identity", "Flatten", "Unflatten", "Dropout", "MSELoss",
           "NLLLoss", "CrossEntropyLoss", "Threshold", "Hardtanh", "ReLU6", "LeakyReLU", "ELU", "CELU", "SELU", "Mish",
           "Hardswish", "Hardsigmoid", "Softplus", "LogSigmoid", "Tanhshrink", "Softsign", "Softshrink", "Hardshrink",
           "Softmin", "GLU", "PReLU", "RReLU", "L1Loss", "SmoothL1Loss", "HuberLoss", "SoftMarginLoss", "BCELoss",
           "BCEWithLogitsLoss", "KLDivLoss", "PoissonNLLLoss", "GaussianNLLLoss", "MarginRankingLoss",
           "CosineEmbeddingLoss", "HingeEmbeddingLoss", "MultiLabelSoftMarginLoss", "TripletMarginLoss",
           "MultiMarginLoss",
           "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d",
           "AdaptiveAvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "BatchNorm1d", "BatchNorm2d", "InstanceNorm1d",
           "InstanceNorm2d", "GroupNorm", "ConstantPad1d", "ConstantPad2d", "ZeroPad1d", "ZeroPad2d",
           "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad1d", "ReplicationPad2d", "CircularPad1d", "CircularPad2d"]
from .upsampling import (  # noqa: E402
    AdaptiveAvgPool3d, ChannelShuffle, PixelShuffle, PixelUnshuffle, Upsample, UpsamplingBilinear2d, UpsamplingNearest2d)

__all__ += ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d", "PixelShuffle", "PixelUnshuffle", "ChannelShuffle",
           "AdaptiveAvgPool3d"]
from ._dropout_nd import AlphaDropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout  # noqa: E402

__all__ += ["Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]
from .bilinear import Bilinear  # noqa: E402

__all__ += ["Bilinear"]
from ._triplet_distance import TripletMarginWithDistanceLoss  # noqa: E402

__all__ += ["TripletMarginWithDistanceLoss"]
from ._mha import MultiheadAttention  # noqa: E402
from .transformer import (  # noqa: E402
    Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder, TransformerEncoderLayer)

__all__ += ["MultiheadAttention", "Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
            "TransformerDecoderLayer"]
from ._ctc import CTCLoss  # noqa: E402

__all__ += ["CTCLoss"]
from .pooling3d import (  # noqa: E402
    AdaptiveMaxPool3d, AvgPool3d, EmbeddingBag, Fold, MaxPool3d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d,
    MultiLabelMarginLoss, Unfold)

__all__ += ["MaxPool3d", "AvgPool3d", "AdaptiveMaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "Fold",
            "Unfold", "EmbeddingBag", "MultiLabelMarginLoss"]
from .padding import (  # noqa: E402
    CircularPad3d, ConstantPad3d, ReflectionPad3d, ReplicationPad3d, ZeroPad3d)

__all__ += ["ConstantPad3d", "ZeroPad3d", "ReflectionPad3d", "ReplicationPad3d", "CircularPad3d"]
from ._fractional_pool import FractionalMaxPool2d, FractionalMaxPool3d  # noqa: E402

__all__ += ["FractionalMaxPool2d", "FractionalMaxPool3d"]
