"""The runtime: engine, vars, contexts, storage, resources, profiler.

It knows nothing of arrays or operators; every other layer builds on it.
"""

from .context import Context, cpu, cpu_pinned, cpu_shared, current_context, device, gpu, num_gpus, register_device_type
from .engine import Engine, Operator, bulk, get, set_bulk_size
from .features import Feature, Features, feature_list
from .resource import Resource, ResourceManager, ResourceRequest, register_resource_factory
from .run_context import FnProperty, RunContext
from .storage import Storage, StorageHandle, has_registered_storage, register_storage
from .streams import DeviceHooks, register_device_hooks
from .var import VarHandle

__all__ = [
    "Context", "cpu", "gpu", "cpu_pinned", "cpu_shared", "current_context", "num_gpus", "device",
    "register_device_type", "register_storage", "has_registered_storage",
    "Engine", "Operator", "get", "bulk", "set_bulk_size", "Feature", "Features", "feature_list",
    "FnProperty", "RunContext", "VarHandle", "DeviceHooks", "register_device_hooks",
    "Resource", "ResourceManager", "ResourceRequest", "register_resource_factory", "Storage", "StorageHandle",
]
