"""``mx.context``: devices (see :mod:`mxasync.runtime.context`)."""

from .backends import registry as _registry  # noqa: F401 - installs the finder of plugin device types
from .runtime.context import Context, cpu, cpu_pinned, cpu_shared, current_context, device, device_types, gpu, num_gpus
from .util import get_gpu_memory as _gpu_memory

__all__ = ["Context", "cpu", "gpu", "cpu_pinned", "cpu_shared", "current_context", "num_gpus", "device",
           "device_types", "gpu_memory_info"]


def gpu_memory_info(device_id: int = 0) -> tuple[int, int]:
    """``(free, total)`` bytes of GPU ``device_id``'s memory (needs CuPy, the gpu extra)."""
    return _gpu_memory(device_id)
