"""The numpy backend: serves ``cpu`` (and ``cpu_pinned``, which is host memory too)."""

from .backend import NumpyBackend, NumpyPinnedBackend

__all__ = ["NumpyBackend", "NumpyPinnedBackend"]
