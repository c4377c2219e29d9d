"""``mx.gluon.nn``: neural network layers and containers."""

from .sequential import HybridLambda, HybridSequential, Lambda, Sequential

__all__ = ["Sequential", "HybridSequential", "Lambda", "HybridLambda"]
