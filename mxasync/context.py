"""``mx.context``: devices (see :mod:`mxasync.runtime.context`)."""

from .backends import registry as _registry  # noqa: F401 - installs the finder of plugin device types
from .runtime.context import Context, cpu, cpu_pinned, cpu_shared, current_context, device, device_types, gpu, num_gpus

__all__ = ["Context", "cpu", "gpu", "cpu_pinned", "cpu_shared", "current_context", "num_gpus", "device",
           "device_types"]
