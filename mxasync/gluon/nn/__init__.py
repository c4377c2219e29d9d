"""``mx.gluon.nn``: neural network layers and containers."""

from ..block import Block, HybridBlock, SymbolBlock  # MXNet's nn re-exports them (user code writes nn.HybridBlock)
from .activations import *  # noqa: F403
from .activations import __all__ as _activations
from .basic_layers import *  # noqa: F403
from .basic_layers import __all__ as _basic
from .conv_layers import *  # noqa: F403
from .conv_layers import __all__ as _conv
from .sequential import HybridLambda, HybridSequential, Lambda, Sequential

__all__ = ["Block", "HybridBlock", "SymbolBlock", "Sequential", "HybridSequential", "Lambda", "HybridLambda",
           *_activations, *_basic, *_conv]
