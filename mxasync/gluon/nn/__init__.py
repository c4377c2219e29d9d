"""``mx.gluon.nn``: neural network layers and containers."""

from .activations import *  # noqa: F403
from .activations import __all__ as _activations
from .basic_layers import *  # noqa: F403
from .basic_layers import __all__ as _basic
from .conv_layers import *  # noqa: F403
from .conv_layers import __all__ as _conv
from .sequential import HybridLambda, HybridSequential, Lambda, Sequential

__all__ = ["Sequential", "HybridSequential", "Lambda", "HybridLambda", *_activations, *_basic, *_conv]
