"""Sequence ops (time-major by default, MXNet 1.x): SequenceMask, SequenceLast, SequenceReverse.

>>> from mxasync.operator import get_op
>>> get_op("SequenceMask").prepare(use_sequence_length=True).list_arguments()
['data', 'sequence_length']
"""

from __future__ import annotations

from typing import Literal

from ..functional import FunctionalProperty, defop
from ..params import OpParam

__all__ = ["SequenceMaskParam", "SequenceLastParam", "SequenceReverseParam"]


class SequenceMaskParam(OpParam):
    use_sequence_length: bool = False
    value: float = 0.0
    axis: Literal[0, 1] = 0


class _SequenceMaskProperty(FunctionalProperty):
    """Sequence ops: data with a time and a batch axis, optional lengths (one per sequence)."""

    def out_shape(self, d):
        return d  # SequenceMask and SequenceReverse keep data's shape

    def infer_shape(self, in_shapes):
        d = in_shapes[0]
        p = self.params
        if d is None:
            return list(in_shapes), [None], []
        if len(d) < 2:
            raise self.error(f"data has shape {tuple(d)}; it needs a time and a batch axis")
        out = self.out_shape(tuple(d))
        if not p.use_sequence_length:
            return [d], [out], []
        b = (d[1 - p.axis],)
        if in_shapes[1] is not None and tuple(in_shapes[1]) != b:
            raise self.error(f"sequence_length has shape {tuple(in_shapes[1])} but data {tuple(d)} with "
                             f"axis={p.axis} needs {b}")
        return [d, b], [out], []

    def infer_type(self, in_types):
        # MXNet: the output has data's dtype; sequence_length keeps its own (int32 lengths are
        # common) and takes data's only when unknown
        t = in_types[0]
        if t is None:
            return list(in_types), [None], []
        return [t] + [t if u is None else u for u in in_types[1:]], [t], []


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


class SequenceLastParam(OpParam):
    use_sequence_length: bool = False
    axis: Literal[0, 1] = 0


class _SequenceLastProperty(_SequenceMaskProperty):
    def out_shape(self, d):
        return tuple(s for i, s in enumerate(d) if i != self.params.axis)  # the time axis goes


def _last_steps(xp, p, data, lengths):
    """The index of each sequence's last valid step (T - 1 without lengths)."""
    steps, batch = data.shape[p.axis], data.shape[1 - p.axis]
    if lengths is None:
        return xp.full((batch,), steps - 1, dtype="int64")
    return xp.clip(lengths.astype("int64") - 1, 0, steps - 1)


def _sequence_last(xp, p, data, lengths=None):
    last = _last_steps(xp, p, data, lengths)
    batch = xp.arange(data.shape[1 - p.axis])
    return data[last, batch] if p.axis == 0 else data[batch, last]


def _sequence_last_bwd(xp, p, og, ins, outs):
    data = ins[0]
    lengths = ins[1] if p.use_sequence_length else None
    last = _last_steps(xp, p, data, lengths)
    batch = xp.arange(data.shape[1 - p.axis])
    grad = xp.zeros(data.shape, dtype=og[0].dtype)
    if p.axis == 0:
        grad[last, batch] = og[0]
    else:
        grad[batch, last] = og[0]
    return [grad] + ([None] if p.use_sequence_length else [])


defop("SequenceLast", param=SequenceLastParam, base=_SequenceLastProperty, arguments=("data", "sequence_length"),
      args=lambda p: ["data", "sequence_length"] if p.use_sequence_length else ["data"], deps="og,in",
      fwd=_sequence_last, bwd=_sequence_last_bwd,
      doc="The last valid step of each sequence: step ``sequence_length - 1`` (or the last one); time is ``axis`` "
          "(0: (T, B, ...), 1: (B, T, ...)); the output drops the time axis.")


class SequenceReverseParam(OpParam):
    use_sequence_length: bool = False
    axis: Literal[0] = 0  # MXNet 1.9.1 implements time-major only


def _reverse_index(xp, data, lengths):
    """For each (t, b): the time step it takes its value from (the first ``length`` steps reversed)."""
    steps, batch = data.shape[0], data.shape[1]
    t = xp.arange(steps).reshape(-1, 1)
    n = (xp.full((1, batch), steps, dtype="int64") if lengths is None
         else xp.clip(lengths.astype("int64"), 0, steps).reshape(1, -1))
    return xp.where(t < n, n - 1 - t, t), xp.broadcast_to(xp.arange(batch).reshape(1, -1), (steps, batch))


def _sequence_reverse(xp, p, data, lengths=None):
    src, batch = _reverse_index(xp, data, lengths)
    return data[src, batch]


def _sequence_reverse_bwd(xp, p, og, ins, outs):
    lengths = ins[1] if p.use_sequence_length else None
    src, batch = _reverse_index(xp, ins[0], lengths)
    return [og[0][src, batch]] + ([None] if p.use_sequence_length else [])  # the permutation is its own inverse


defop("SequenceReverse", param=SequenceReverseParam, base=_SequenceMaskProperty,
      arguments=("data", "sequence_length"),
      args=lambda p: ["data", "sequence_length"] if p.use_sequence_length else ["data"], deps="og,in",
      fwd=_sequence_reverse, bwd=_sequence_reverse_bwd,
      doc="Reverse the first ``sequence_length`` steps of each sequence (all steps without lengths); the steps "
          "past a sequence's length stay in place. Time-major (T, B, ...) as in MXNet 1.9.1.")
