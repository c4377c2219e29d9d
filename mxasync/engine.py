"""``mx.engine``: the process-wide dependency engine (see :mod:`mxasync.runtime.engine`)."""

from .runtime.engine import Engine, Operator, bulk, get, set_bulk_size
from .runtime.run_context import FnProperty, RunContext
from .runtime.var import VarHandle

__all__ = ["Engine", "Operator", "bulk", "get", "set_bulk_size", "FnProperty", "RunContext", "VarHandle"]
