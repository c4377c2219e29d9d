"""Recording and training flags, per thread, and the one seam to autograd's recorder.

NDArray and ``invoke`` read these flags on their hot path; ``mx.autograd`` exposes them
(``mx.autograd.record()``, ``is_training()``, ...; ``mx.autograd.state`` is this module).
``active`` counts the threads whose recording or training flag is on: when it is 0 (the
usual case outside ``record()``), an op call pays one module-attribute check and nothing
else.  What recording *does* (the tape, ``attach_grad``, ``backward``) is autograd's: it
installs a :class:`Recorder` in :data:`mxasync._seams.recorder`, the only way this layer
reaches it.  An array's ``_ag`` slot holds the recorder's entry for it (None: the array
is in no graph); this layer reads only the entry's ``node`` (None for a variable),
``grad`` and ``fresh`` attributes.

>>> from mxasync.ndarray import _recording as state
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

import threading
from contextlib import contextmanager
from typing import Any, Protocol

from .. import _seams
from ..base import MXAsyncError

__all__ = ["is_recording", "is_training", "set_recording", "set_training", "record", "pause", "train_mode",
           "predict_mode", "active", "Recorder", "recorder"]


class Recorder(Protocol):
    """What NDArray asks of autograd (installed by ``mxasync.autograd``)."""

    def record_op(self, prop: Any, ctx: Any, args: list, aux: list, outputs: list, is_train: bool) -> None:
        """An op call made while recording: a node on the tape when an input is in a graph."""

    def attach_grad(self, arr: Any, grad_req: str, stype: Any) -> None:
        """``arr.attach_grad()``: a zero gradient buffer; the array becomes a variable."""

    def backward(self, heads: list, head_grads: list | None, retain_graph: bool, train_mode: bool) -> None:
        """``mx.autograd.backward``: push the backward of the heads' graph."""


def recorder() -> Recorder:
    """The installed recorder (loading autograd if nothing installed it yet)."""
    return _seams.recorder.get()


class _Flags(threading.local):
    recording = False
    training = False
    depth = 0      # nesting of record() scopes on this thread
    tape = None    # the nodes recorded since the outermost record() began (see mxasync/autograd/tape.py)


_tls = _Flags()
_lock = threading.Lock()
#: number of threads whose recording or training flag is on (the invoke paths' one check)
active = 0


def _set(recording: bool, training: bool) -> None:
    global active
    if recording and _seams.recorder.impl is None:
        _seams.recorder.get()  # recording needs the tape: load autograd if this thread got here without it
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


# -- writes the recorded graph cannot follow (MXNet refuses them with these messages) ----------------
def _in_graph_error(what: str) -> MXAsyncError:
    return MXAsyncError(f"{what}: assigning to an NDArray that is already in a computational graph while "
                        "recording would make its gradients wrong; call backward first to clear the graph, "
                        "write outside autograd.record(), or write into a detach()ed copy")


def check_out(prop, out) -> None:
    """The in-place guard of ``out=`` while recording."""
    for o in out if isinstance(out, (list, tuple)) else (out,):
        if getattr(o, "_ag", None) is not None:
            raise _in_graph_error(prop.label)


def check_write(arr, what: str) -> None:
    """The in-place guard of ``x[...] = v`` and ``copyto(x)``."""
    if arr._ag is not None and _tls.recording:
        raise _in_graph_error(what)


def check_inplace(value, what: str) -> None:
    """Writing an array that is in the graph into another one in place (``x[i] = y``, ``x += y``)
    while recording: MXNet records no such op and refuses it with this message."""
    if getattr(value, "_ag", None) is not None and _tls.recording:
        raise MXAsyncError(f"{what}: Inplace operations (+=, -=, x[:]=, etc) are not supported when recording "
                           "with autograd; write out-of-place (z = x + y) or outside autograd.record()")
