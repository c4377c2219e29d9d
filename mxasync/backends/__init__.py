"""Backends as plugins: ``mx.backends.list()``, ``get_backend(device_type)``.

Each backend is found through the ``mxasync.backends`` entry-point group; our
own numpy (cpu) and CuPy (gpu) backends are registered that way too.
"""

from .base import PLUGIN_API_VERSION, Backend, BackendState
from .registry import (
           ENTRY_POINT_GROUP,
           BackendWarning,
           generation,
           get_backend,
           list_backends,
           on_switch,
           register_backend,
           reset,
           use,
)

list = list_backends  # noqa: A001 - MXNet-style public name: mx.backends.list()

__all__ = ["Backend", "BackendState", "BackendWarning", "ENTRY_POINT_GROUP", "PLUGIN_API_VERSION", "get_backend",
           "generation", "on_switch", "list_backends", "register_backend", "reset", "use", "list"]
