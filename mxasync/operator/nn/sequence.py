"""Sequence ops (time-major by default, MXNet 1.x): SequenceMask.

>>> from mxasync.operator import get_op
>>> get_op("SequenceMask").prepare(use_sequence_length=True).list_arguments()
['data', 'sequence_length']
"""

from __future__ import annotations

from typing import Literal

from ..functional import FunctionalProperty, defop
from ..params import OpParam

__all__ = ["SequenceMaskParam"]


class SequenceMaskParam(OpParam):
    use_sequence_length: bool = False
    value: float = 0.0
    axis: Literal[0, 1] = 0


class _SequenceMaskProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        d = in_shapes[0]
        p = self.params
        if d is None:
            return list(in_shapes), [None], []
        if len(d) < 2:
            raise self.error(f"data has shape {tuple(d)}; it needs a time and a batch axis")
        if not p.use_sequence_length:
            return [d], [d], []
        b = (d[1 - p.axis],)
        if in_shapes[1] is not None and tuple(in_shapes[1]) != b:
            raise self.error(f"sequence_length has shape {tuple(in_shapes[1])} but data {tuple(d)} with "
                             f"axis={p.axis} needs {b}")
        return [d, b], [d], []


def _keep(xp, p, data, lengths):
    """A boolean array broadcastable to ``data``: time step < the sequence's length."""
    t = xp.arange(data.shape[p.axis]).reshape((-1, 1) if p.axis == 0 else (1, -1))
    lens = lengths.astype("int64").reshape((1, -1) if p.axis == 0 else (-1, 1))
    keep = t < lens
    return keep.reshape(keep.shape + (1,) * (data.ndim - 2))


def _sequence_mask(xp, p, data, lengths=None):
    if not p.use_sequence_length:
        return data.copy()
    return xp.where(_keep(xp, p, data, lengths), data, xp.asarray(p.value, dtype=data.dtype))


def _sequence_mask_bwd(xp, p, og, ins, outs):
    if not p.use_sequence_length:
        return [og[0]]
    return [og[0] * _keep(xp, p, ins[0], ins[1]), None]


defop("SequenceMask", param=SequenceMaskParam, base=_SequenceMaskProperty, arguments=("data", "sequence_length"),
      args=lambda p: ["data", "sequence_length"] if p.use_sequence_length else ["data"], deps="og,in",
      fwd=_sequence_mask, bwd=_sequence_mask_bwd,
      doc="Set the steps at or past each sequence's length to ``value``; time is ``axis`` (0: (T, B, ...), "
          "1: (B, T, ...)), lengths are (B,).")
