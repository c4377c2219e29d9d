"""AMP's dynamic loss scaler, with MXNet 1.9.1's constants and schedule.

The scale starts at 2**16.  Each :meth:`LossScaler.has_overflow` (the trainer asks it before every
update) checks the gradients; on a non-finite one the step is skipped and the scale used next is half
of this one; after 2000 steps in a row without overflow it doubles (at most 2**24).  As in MXNet,
the new scale takes effect one check later: ``loss_scale`` moves to the pending value when the
gradients scaled with the old one are checked.
"""

from __future__ import annotations

import logging

from ... import autograd
from ...ndarray._creation import ones
from ...ndarray._invoke import invoke
from ...ndarray.ndarray import NDArray

__all__ = ["LossScaler"]

_CHUNK = 200  # arrays per multi_all_finite call (MXNet's chunk)


class LossScaler:
    """Dynamic loss scaling: halve on overflow, double after ``scale_seq_len`` clean steps."""

    def __init__(self, init_scale: float = 2.0 ** 16, max_scale: float = 2.0 ** 24, scale_seq_len: int = 2000):
        self._loss_scale = float(init_scale)
        self._next_loss_scale = self._loss_scale
        self._max_loss_scale = float(max_scale)
        self._scale_seq_len = scale_seq_len
        self._unskipped = 0

    @property
    def loss_scale(self) -> float:
        """The scale losses are multiplied by now (``amp.scale_loss``)."""
        return self._loss_scale

    def has_overflow(self, params) -> bool:
        """Whether any gradient of ``params`` (Gluon Parameters) is inf or NaN; moves the scale on."""
        grads = [g for p in params if p._grad is not None for g in p.list_grad()]
        overflow = bool(grads) and not _all_finite(grads)
        self._loss_scale = self._next_loss_scale
        if overflow:
            self._next_loss_scale = self._loss_scale / 2.0
            self._unskipped = 0
            logging.info("AMP: decreasing loss scale to %f", self._next_loss_scale)
        else:
            self._unskipped += 1
        if self._unskipped == self._scale_seq_len:
            self._unskipped = 0
            self._next_loss_scale = min(self._max_loss_scale, self._loss_scale * 2.0)
            logging.info("AMP: increasing loss scale to %f", self._next_loss_scale)
        return overflow


def _all_finite(grads: list[NDArray]) -> bool:
    with autograd.pause():
        flag = ones((1,), ctx=grads[0].context)
        for i in range(0, len(grads), _CHUNK):
            chunk = grads[i:i + _CHUNK]
            invoke("multi_all_finite", chunk, out=flag, num_arrays=len(chunk), init_output=False)
        return bool(flag.asscalar())
