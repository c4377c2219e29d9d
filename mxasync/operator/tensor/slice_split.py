"""Slicing ops: _split_v2 (split_v2), _slice_assign, _slice_assign_scalar (MXNet 1.x).

>>> from mxasync.operator import get_op
>>> p = get_op("split_v2").prepare(indices_or_sections=(2, 3))
>>> p.list_outputs(), p.infer_shape([(6, 4)])[1]
(['output0', 'output1', 'output2'], [(2, 4), (1, 4), (3, 4)])
>>> get_op("_slice_assign_scalar").prepare(scalar=7, begin=(1,), end=(3,)).infer_shape([(4, 6)])[1]
[(4, 6)]
"""

from __future__ import annotations

from typing import Optional, Union

from ..functional import FunctionalProperty, defop
from ..params import Field, OpParam

__all__ = ["SplitV2Param", "SliceAssignParam", "SliceAssignScalarParam"]


# -- _split_v2 / split_v2 -------------------------------------------------------------------------
class SplitV2Param(OpParam):
    indices_or_sections: Optional[Union[int, tuple[int, ...]]] = Field(
        default=None, description="split_v2's argument: N equal sections, or the boundaries after 0")
    axis: int = 0
    squeeze_axis: bool = False
    sections: int = Field(default=0, ge=0)
    indices: tuple[int, ...] = Field(default=(), description="_split_v2's start of each part (begins with 0)")


def _plan(p: SplitV2Param) -> tuple[int, tuple[int, ...]]:
    """(sections, indices) from either form; sections > 0 wins, as in MXNet."""
    ios = p.indices_or_sections
    if ios is None:
        return p.sections, tuple(p.indices)
    if isinstance(ios, int):
        return ios, ()
    return 0, (0,) + tuple(ios)


class _SplitV2Property(FunctionalProperty):
    def list_outputs(self):
        p = self.params
        if p.indices_or_sections is not None and (p.indices or p.sections):
            raise self.error(f"indices_or_sections={p.indices_or_sections} cannot be combined with "
                             f"indices={p.indices} or sections={p.sections}")
        sections, indices = _plan(p)
        n = sections or len(indices)
        if n < 1:
            raise self.error("needs indices_or_sections (or indices / sections > 0): nothing says how to split")
        return [f"output{i}" for i in range(n)]

    def infer_shape(self, in_shapes):
        s = in_shapes[0]
        n = self.num_outputs()
        if s is None:
            return [None], [None] * n, []
        a, bounds = _bounds(self, tuple(s))
        squeeze = self.params.squeeze_axis
        outs = []
        for b, e in bounds:
            if squeeze and e - b != 1:
                raise self.error(f"squeeze_axis=True needs parts of size 1 along axis {a} of data {tuple(s)}, "
                                 f"part [{b}:{e}] has size {e - b}")
            outs.append(s[:a] + (() if squeeze else (e - b,)) + s[a + 1:])
        return [s], outs, []


def _bounds(prop, shape) -> tuple[int, list[tuple[int, int]]]:
    p = prop.params
    nd = len(shape)
    a = p.axis + nd if p.axis < 0 else p.axis
    if not 0 <= a < nd:
        raise prop.error(f"axis={p.axis} is out of range for a {nd}-D input of shape {shape}")
    size = shape[a]
    sections, indices = _plan(p)
    if sections:
        if size % sections:
            raise prop.error(f"{sections} sections do not divide axis {a} of size {size} of data {shape} equally")
        k = size // sections
        return a, [(i * k, (i + 1) * k) for i in range(sections)]
    if indices[0] != 0:
        raise prop.error(f"indices={indices} must start at 0 (each index is where a part begins)")
    ends = list(indices[1:]) + [size]
    for i, (b, e) in enumerate(zip(indices, ends, strict=True)):
        if not 0 <= b <= e <= size:
            raise prop.error(f"split boundaries {indices[1:]} must be sorted and within [0, {size}] (axis {a} of "
                             f"data {shape}); part {i} would be [{b}:{e}]")
    return a, list(zip(indices, ends, strict=True))


class _Run:
    def __init__(self, params):
        self.params = params

    def error(self, msg):  # shapes were checked at inference; kept for completeness
        return ValueError(msg)


def _split_v2(xp, p, x):
    a, bounds = _bounds(_Run(p), x.shape)
    lead = (slice(None),) * a
    parts = [x[lead + (slice(b, e),)] for b, e in bounds]
    parts = [xp.squeeze(q, axis=a) if p.squeeze_axis else q for q in parts]
    return parts[0] if len(parts) == 1 else parts  # one output is assigned as one array


def _split_v2_bwd(xp, p, og, ins, outs):
    x = ins[0]
    a, bounds = _bounds(_Run(p), x.shape)
    g = xp.zeros(x.shape, dtype=next((o.dtype for o in og if o is not None), x.dtype))
    lead = (slice(None),) * a
    for o, (b, e) in zip(og, bounds, strict=True):
        if o is not None:
            g[lead + (slice(b, e),)] = xp.expand_dims(o, a) if p.squeeze_axis else o
    return [g]


defop("_split_v2", param=SplitV2Param, base=_SplitV2Property, aliases=("split_v2",), deps="og,in",
      outputs=("output0",), fwd=_split_v2, bwd=_split_v2_bwd,
      doc="Split along ``axis`` (default 0) as numpy.split: ``indices_or_sections`` is N equal parts or the "
          "boundaries (2, 3) giving [:2], [2:3], [3:]; MXNet's raw form ``indices`` (0, 2, 3) / ``sections`` "
          "works too.  ``squeeze_axis`` drops the axis from parts of size 1.")


# -- _slice_assign / _slice_assign_scalar ---------------------------------------------------------
class SliceAssignParam(OpParam):
    begin: tuple[Optional[int], ...]
    end: tuple[Optional[int], ...]
    step: tuple[Optional[int], ...] = ()


class SliceAssignScalarParam(OpParam):
    scalar: float = 0.0
    begin: tuple[Optional[int], ...]
    end: tuple[Optional[int], ...]
    step: tuple[Optional[int], ...] = ()


def _region(prop, shape) -> tuple[tuple[slice, ...], tuple[int, ...]]:
    """The slices that begin/end/step select from ``shape`` and the shape of that region."""
    p = prop.params
    if len(p.begin) != len(p.end) or (p.step and len(p.step) != len(p.begin)):
        raise prop.error(f"begin={p.begin}, end={p.end} and step={p.step} must have the same length")
    if len(p.begin) > len(shape):
        raise prop.error(f"begin={p.begin} has more axes than the {len(shape)}-D input of shape {shape}")
    steps = p.step or (None,) * len(p.begin)
    if 0 in steps:
        raise prop.error(f"step={p.step}: a step cannot be 0")
    sl = tuple(slice(b, e, s) for b, e, s in zip(p.begin, p.end, steps, strict=True))
    region = tuple(len(range(*k.indices(d))) for k, d in zip(sl, shape, strict=False)) + tuple(shape[len(sl):])
    return sl, region


class _SliceAssignProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        s = in_shapes[0]
        if s is None:
            return list(in_shapes), [None], []
        s = tuple(s)
        _, region = _region(self, s)
        if len(in_shapes) == 2:  # _slice_assign: rhs fills the region exactly
            r = in_shapes[1]
            if r is not None and tuple(r) != region:
                p = self.params
                raise self.error(f"rhs has shape {tuple(r)} but begin={p.begin}, end={p.end}, step={p.step} "
                                 f"select {region} from lhs of shape {s}")
            return [s, region], [s], []
        return [s], [s], []


def _slice_assign(xp, p, lhs, rhs):
    out = lhs.copy()
    out[_region(_Run(p), lhs.shape)[0]] = rhs
    return out


def _slice_assign_scalar(xp, p, x):
    out = x.copy()
    out[_region(_Run(p), x.shape)[0]] = p.scalar
    return out


def _outside(xp, p, g):
    sl = _region(_Run(p), g.shape)[0]
    g = g.copy()
    g[sl] = 0
    return g, sl


def _slice_assign_bwd(xp, p, og, ins, outs):
    g, sl = _outside(xp, p, og[0])
    return [g, og[0][sl].copy()]  # a copy: in place, in_grad[0] may be og[0]


defop("_slice_assign", param=SliceAssignParam, base=_SliceAssignProperty, arguments=("lhs", "rhs"),
      aliases=("_crop_assign",), deps="og", inplace=True, fwd=_slice_assign, bwd=_slice_assign_bwd,
      doc="A copy of ``lhs`` with ``lhs[begin:end:step]`` replaced by ``rhs`` (of exactly that region's shape).")
defop("_slice_assign_scalar", param=SliceAssignScalarParam, base=_SliceAssignProperty,
      aliases=("_crop_assign_scalar",), deps="og", inplace=True, fwd=_slice_assign_scalar,
      bwd=lambda xp, p, og, ins, outs: [_outside(xp, p, og[0])[0]],
      doc="A copy of ``data`` with ``data[begin:end:step]`` set to ``scalar``.")
