"""The profiler: engine ops and user ranges as Chrome traces (``core``), MXNet's profiler
objects (``objects``) and its aggregate statistics table (``stats``)."""

from .core import (
    CUSTOM_OP_DOMAIN,
    OPERATOR_DOMAIN,
    Profiler,
    Record,
    current,
    current_scope,
    dump,
    dumps,
    pause,
    resume,
    scope,
    set_config,
    set_state,
    state,
)
from .objects import Counter, Domain, Event, Frame, Marker, Task

__all__ = ["Profiler", "Record", "set_config", "set_state", "state", "dump", "dumps", "pause", "resume",
           "OPERATOR_DOMAIN", "CUSTOM_OP_DOMAIN", "scope", "current_scope", "current",
           "Domain", "Task", "Frame", "Event", "Counter", "Marker"]
