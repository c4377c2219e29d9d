"""Autograd's side of the recording seam: the recorder NDArray calls (``mxasync._seams.recorder``).

Importing :mod:`mxasync.autograd` installs it; the protocol is
:class:`mxasync.ndarray._recording.Recorder`.
"""

from __future__ import annotations

from .. import _seams
from . import backprop, tape

__all__ = ["TapeRecorder"]


class TapeRecorder:
    """Records op calls on the tape, makes variables, runs backward."""

    record_op = staticmethod(tape.record_op)
    attach_grad = staticmethod(tape.attach_grad)

    @staticmethod
    def backward(heads: list, head_grads: list | None, retain_graph: bool, train_mode: bool) -> None:
        backprop.backward(heads, head_grads, retain_graph, train_mode)


_seams.recorder.install(TapeRecorder())
