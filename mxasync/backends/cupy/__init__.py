"""The CuPy backend: serves ``gpu``.  Importing this package never imports cupy."""

from .backend import CupyBackend, CupyDeviceHooks

__all__ = ["CupyBackend", "CupyDeviceHooks"]
