"""``mx.context``: devices (see :mod:`mxasync.runtime.context`)."""

from .runtime.context import Context, cpu, cpu_pinned, cpu_shared, current_context, gpu, num_gpus

__all__ = ["Context", "cpu", "gpu", "cpu_pinned", "cpu_shared", "current_context", "num_gpus"]
