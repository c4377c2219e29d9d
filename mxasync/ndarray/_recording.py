"""Recording and training flags, per thread (``mx.autograd.record()`` and friends).

This module imports nothing from mxasync, so :mod:`mxasync.ndarray` can read it
on its hot path.  ``active`` counts the threads whose recording or training
flag is on: when it is 0 (the usual case outside ``record()``), an op call
pays one module-attribute check and nothing else.

>>> from mxasync.autograd import state
>>> state.is_recording(), state.is_training()
(False, False)
>>> with state.record():
...     state.is_recording(), state.is_training()
(True, True)
>>> with state.record(train_mode=False):
...     with state.pause():
...         state.is_recording(), state.is_training()
(False, False)
>>> state.set_training(True), state.set_training(False)
(False, True)
"""

from __future__ import annotations

import sys
import threading
from contextlib import contextmanager

__all__ = ["is_recording", "is_training", "set_recording", "set_training", "record", "pause", "train_mode",
           "predict_mode", "active"]


class _Flags(threading.local):
    recording = False
    training = False
    depth = 0      # nesting of record() scopes on this thread
    tape = None    # the nodes recorded since the outermost record() began (see tape.py)


_tls = _Flags()
_lock = threading.Lock()
#: number of threads whose recording or training flag is on (the invoke paths' one check)
active = 0


def _set(recording: bool, training: bool) -> None:
    global active
    if recording and "mxasync.autograd.tape" not in sys.modules:
        # the tape installs invoke's record hook; it builds on NDArray, so it loads on the first recording
        from . import tape  # noqa: F401
    t = _tls
    was = t.recording or t.training
    now = recording or training
    t.recording, t.training = recording, training
    if was != now:
        with _lock:
            active += 1 if now else -1


def is_recording() -> bool:
    """Whether op calls on this thread are recorded for backward."""
    return _tls.recording


def is_training() -> bool:
    """Whether op calls on this thread run in training mode (Dropout drops, BatchNorm uses batch statistics)."""
    return _tls.training


def set_recording(is_recording: bool) -> bool:  # noqa: FBT001 - MXNet's signature
    """Turn recording on or off on this thread; returns the previous value."""
    prev = _tls.recording
    _set(bool(is_recording), _tls.training)
    return prev


def set_training(train_mode: bool) -> bool:  # noqa: FBT001 - MXNet's signature
    """Turn training mode on or off on this thread; returns the previous value."""
    prev = _tls.training
    _set(_tls.recording, bool(train_mode))
    return prev


@contextmanager
def _scope(recording: bool | None, training: bool | None):
    t = _tls
    prev = (t.recording, t.training)
    _set(prev[0] if recording is None else recording, prev[1] if training is None else training)
    try:
        yield
    finally:
        _set(*prev)


@contextmanager
def record(train_mode: bool = True):  # noqa: FBT001, FBT002 - MXNet's signature
    """Record op calls for :func:`backward` (training mode on unless ``train_mode=False``).

    The outermost ``record()`` of a thread starts a new tape: the previous
    tape's list is dropped (its graphs live on while their arrays do).
    """
    t = _tls
    if t.depth == 0:
        t.tape = []
    t.depth += 1
    try:
        with _scope(True, train_mode):
            yield
    finally:
        t.depth -= 1


def pause(train_mode: bool = False):  # noqa: FBT001, FBT002 - MXNet's signature
    """Stop recording inside this scope (training mode off unless ``train_mode=True``)."""
    return _scope(False, train_mode)


def train_mode():
    """Run ops in training mode in this scope, without changing recording."""
    return _scope(None, True)


def predict_mode():
    """Run ops in inference mode in this scope, without changing recording."""
    return _scope(None, False)


def current_tape():
    """This thread's tape (a list of nodes), creating it when recording starts without ``record()``."""
    t = _tls
    if t.tape is None:
        t.tape = []
    return t.tape
