"""``mx.profiler``: Chrome traces of engine ops, MXNet's profiler objects and aggregate table.

See :mod:`mxasync.runtime.profiler`.
"""

from .runtime.profiler import (
    Counter,
    Domain,
    Event,
    Frame,
    Marker,
    Task,
    dump,
    dumps,
    pause,
    resume,
    set_config,
    set_state,
    state,
)

__all__ = ["set_config", "set_state", "state", "dump", "dumps", "pause", "resume",
           "Domain", "Task", "Frame", "Event", "Counter", "Marker"]
