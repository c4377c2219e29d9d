"""``mx.profiler``: Chrome traces of engine ops (see :mod:`mxasync.runtime.profiler`)."""

from .runtime.profiler import dump, dumps, pause, resume, set_config, set_state, state

__all__ = ["set_config", "set_state", "state", "dump", "dumps", "pause", "resume"]
