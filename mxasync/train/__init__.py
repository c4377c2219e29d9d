"""``mxasync train``: the training job (networks, data with augmentation, the command line)."""

from .networks import get_network, lenet, mlp

__all__ = ["get_network", "lenet", "mlp"]
