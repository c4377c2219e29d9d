"""The numpy backend: serves ``cpu`` (and ``cpu_pinned``, ``cpu_shared``, which are host memory too)."""

from .backend import NumpyBackend, NumpyPinnedBackend, NumpySharedBackend

__all__ = ["NumpyBackend", "NumpyPinnedBackend", "NumpySharedBackend"]
