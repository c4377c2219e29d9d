"""``mx.random``: seeding the engine's generators (see :mod:`mxasync.runtime.resource`)."""

from .runtime.resource import seed

__all__ = ["seed"]
