"""``mx.profiler``: Chrome traces of engine ops, MXNet's profiler objects and aggregate table.

See :mod:`mxasync.runtime.profiler` and :mod:`mxasync.runtime.profiler_objects`.
"""

from .runtime.profiler import dump, dumps, pause, resume, set_config, set_state, state
from .runtime.profiler_objects import Counter, Domain, Event, Frame, Marker, Task

__all__ = ["set_config", "set_state", "state", "dump", "dumps", "pause", "resume",
           "Domain", "Task", "Frame", "Event", "Counter", "Marker"]
