"""``mx.profiler``: Chrome traces of engine ops, MXNet's profiler objects and aggregate table.

See :mod:`mxasync.runtime.profiler`.
"""

import warnings

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
           "Domain", "Task", "Frame", "Event", "Counter", "Marker",
           "profiler_set_config", "profiler_set_state", "dump_profile"]


def profiler_set_config(mode: str = "symbolic", filename: str = "profile.json") -> None:
    """Deprecated (MXNet's): :func:`set_config`; ``mode='all'`` profiles every op, ``'symbolic'`` as well
    here (the engine does not tell symbolic from imperative ops)."""
    warnings.warn("profiler.profiler_set_config() is deprecated. Please use profiler.set_config() instead",
                  DeprecationWarning, stacklevel=2)
    set_config(filename=filename, profile_all=mode == "all", profile_symbolic=True)


def profiler_set_state(state: str = "stop") -> None:
    """Deprecated (MXNet's): :func:`set_state`."""
    warnings.warn("profiler.profiler_set_state() is deprecated. Please use profiler.set_state() instead",
                  DeprecationWarning, stacklevel=2)
    set_state(state)


def dump_profile() -> None:
    """Deprecated (MXNet's): :func:`dump` (writes the trace and stops)."""
    warnings.warn("profiler.dump_profile() is deprecated. Please use profiler.dump() instead",
                  DeprecationWarning, stacklevel=2)
    dump(True)
