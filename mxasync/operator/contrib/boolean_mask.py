"""``_contrib_boolean_mask(data, index; axis=0)`` (MXNet 1.9.1's, also ``mx.nd.contrib.boolean_mask``):
the rows of ``data`` whose entry in the 1-d ``index`` is nonzero, in order. The output's first axis
depends on the values of ``index``: an imperative call waits for ``index`` and sizes its output from
it (the op's ``shape_from_values``); in a graph the shape stays unknown until then. The gradient puts
each output row's head gradient back on its row of ``data`` (zeros elsewhere); ``index`` gets zero.

>>> import mxasync as mx
>>> data = mx.nd.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
>>> mx.nd.contrib.boolean_mask(data, mx.nd.array([0, 1, 1])).asnumpy()
array([[4., 5., 6.],
       [7., 8., 9.]], dtype=float32)
"""

from __future__ import annotations

from pydantic import Field

from ..functional import FunctionalProperty, defop
from ..params import OpParam

__all__ = ["BooleanMaskParam"]


class BooleanMaskParam(OpParam):
    axis: int = Field(0, description="the axis to select along (MXNet 1.9.1 supports only 0)")


class _BooleanMaskProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        if self.params.axis != 0:
            raise self.error(f"axis={self.params.axis} is not supported; only axis=0 is (as in MXNet 1.9.1)")
        data, index = in_shapes
        if index is not None and len(index) != 1:
            raise self.error(f"index has shape {tuple(index)}; it must be 1-d")
        if data is not None and index is not None and (len(data) == 0 or data[0] != index[0]):
            raise self.error(f"index has {index[0]} entries but data {tuple(data)} has "
                             f"{data[0] if len(data) else 'no'} rows")
        return [data, index], [None], []  # the row count depends on index's values

    def infer_type(self, in_types):
        return list(in_types), [in_types[0]], []


def _shape_from_values(prop, in_data):
    data, index = in_data
    return [(int((index != 0).sum()),) + tuple(data.shape[1:])]


def _boolean_mask(xp, p, data, index):
    return data[index != 0]


def _boolean_mask_bwd(xp, p, og, ins, outs):
    data, index = ins
    grad = xp.zeros(data.shape, dtype=og[0].dtype)
    grad[index != 0] = og[0]
    return [grad, None]


defop("_contrib_boolean_mask", param=BooleanMaskParam, base=_BooleanMaskProperty, arguments=("data", "index"),
      fwd=_boolean_mask, bwd=_boolean_mask_bwd, deps="og,in", shape_from_values=_shape_from_values,
      aliases=("_npi_boolean_mask",),
      doc="The rows of data whose entry in the 1-d index is nonzero (the output's length depends on index's "
          "values); gradient back to those rows.")
