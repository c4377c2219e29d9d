"""The dependency engine (``mx.engine``): MXNet's Engine with an asyncio heart.

The public face is :class:`~.threaded.Engine`; see that module for how an op travels and
which collaborator does what.  ``MXASYNC_ENGINE_TYPE=naive`` gives :class:`~.naive.NaiveEngine`.
"""

from . import lifetime  # noqa: F401 - registers the exit and fork handlers
from .ops import Operator
from .threaded import Engine, bulk, get, set_bulk_size

__all__ = ["Engine", "Operator", "get", "bulk", "set_bulk_size"]
