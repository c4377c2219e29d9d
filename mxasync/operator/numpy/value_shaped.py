"""NumPy-interface ops whose result's shape depends on the input *values*: ``unique``, ``bincount`` and
``npx.nonzero`` (MXNet 1.9.1's ``_npi_unique``, ``_npi_bincount`` and ``_npx_nonzero``).

Their ``infer_shape`` leaves the outputs unknown; an imperative call waits for its inputs and
sizes the outputs from them (the op's ``shape_from_values``, which runs the kernel on the
values), and a hybridized block holding one runs its graph op by op, as MXNet's CachedOp does
for dynamic shapes. Their gradients are zero, as in MXNet.

>>> from mxasync.operator import get_op
>>> get_op("_npi_unique").prepare(return_counts=True).infer_shape([(4,)])[1]
[None, None]
>>> import mxasync as mx
>>> x = mx.np.array([3, 1, 3, 0], dtype="int32")
>>> mx.np.bincount(x, minlength=2).tolist()
[1, 1, 0, 2]
>>> [o.tolist() for o in mx.np.unique(x, return_counts=True)]
[[0, 1, 3], [1, 1, 2]]
"""

from __future__ import annotations

import importlib
from typing import Optional

import numpy as np

from ...base import MXAsyncValueError
from ._npop import NumpyProperty, npop

__all__: list[str] = []


def _xp_of(arr):
    """The array namespace of a backend array (numpy, or the module its class comes from: cupy)."""
    return np if isinstance(arr, np.ndarray) else importlib.import_module(type(arr).__module__.split(".")[0])


def _outputs(res) -> tuple:
    return tuple(res) if isinstance(res, (tuple, list)) else (res,)


def _from_values(prop, in_data):
    """The output shapes, from running the kernel on the values (the result itself is made again
    by the engine's push: these ops are seldom hot, and the shape rule stays the kernel's)."""
    return [o.shape for o in _outputs(prop.fwd(_xp_of(in_data[0]), prop.params, *in_data))]


def _zero_grad(xp, p, og, ins, outs):
    return [None] * len(ins)


class _ValueShapedProperty(NumpyProperty):
    """Output shapes unknown until the values are: ``infer_shape`` says None for each. The gradient
    is zero (MXNet 1.9.1 gives zeros to ``bincount``'s weights)."""

    zero_gradient = True

    def infer_shape(self, in_shapes):
        return list(in_shapes), [None] * self.num_outputs(), []


# -- unique -----------------------------------------------------------------------------------------
_UNIQUE_EXTRA = (("return_index", "indices"), ("return_inverse", "inverse"), ("return_counts", "counts"))


class _UniqueProperty(_ValueShapedProperty):
    """``unique`` has one output, plus one for each ``return_*`` flag set (as MXNet's op)."""

    def list_outputs(self):
        return ["output"] + [name for flag, name in _UNIQUE_EXTRA if getattr(self.params, flag)]


def _unique(xp, p, x):
    res = xp.unique(x, return_index=p.return_index, return_inverse=p.return_inverse,
                    return_counts=p.return_counts, axis=p.axis)
    outs = _outputs(res)
    return (outs[0],) + tuple(r.astype(np.int64) for r in outs[1:]) if len(outs) > 1 else outs[0]


def _unique_dtype(prop, in_types):
    return list(in_types), [in_types[0]] + ["int64"] * (prop.num_outputs() - 1), []


npop("_npi_unique", _unique, arguments=("data",),
     params={"return_index": (bool, False), "return_inverse": (bool, False), "return_counts": (bool, False),
             "axis": (Optional[int], None)},
     dtype=_unique_dtype, grad=_zero_grad, deps="", base=_UniqueProperty, shape_from_values=_from_values,
     doc="NumPy's ``unique``: the sorted distinct values (or sub-arrays along ``axis``), then the "
         "indices, inverse and counts asked for (int64). The output length depends on the values.")


# -- bincount ---------------------------------------------------------------------------------------
def _bincount(xp, p, data, *weights):
    if data.dtype.kind not in "iub":
        raise MXAsyncValueError(f"_npi_bincount: data has dtype {data.dtype.name}; it must be an integer type")
    if data.ndim > 1:
        raise MXAsyncValueError(f"_npi_bincount: data has shape {data.shape}; it must be 1-d")
    if p.minlength < 0:
        raise MXAsyncValueError(f"_npi_bincount: minlength={p.minlength} must not be negative")
    if data.size and int(data.min()) < 0:
        raise MXAsyncValueError(f"_npi_bincount: data holds {int(data.min())}; it must be non-negative")
    w = weights[0] if weights else None
    res = xp.bincount(data.reshape(-1), w.reshape(-1) if w is not None else None, minlength=p.minlength)
    return res.astype(w.dtype if w is not None else data.dtype)  # MXNet's result dtypes


npop("_npi_bincount", _bincount, arguments=("data", "weights"),
     params={"minlength": (int, 0), "has_weights": (bool, False)},
     args=lambda p: ["data", "weights"] if p.has_weights else ["data"],
     dtype=lambda prop, t: (list(t), [t[1] if len(t) > 1 else t[0]], []), grad=_zero_grad, deps="",
     base=_ValueShapedProperty, shape_from_values=_from_values,
     doc="NumPy's ``bincount``: how often each value of the 1-d non-negative integer ``data`` occurs "
         "(or its ``weights`` summed), at least ``minlength`` long; in ``data``'s dtype (the weights' "
         "with weights), as MXNet 1.9.1. The output length depends on the values.")


# -- nonzero ----------------------------------------------------------------------------------------
def _nonzero(xp, p, x):
    return xp.argwhere(xp.atleast_1d(x)).astype(np.int64)  # a 0-d input counts as 1-d, as in MXNet


npop("_npx_nonzero", _nonzero, arguments=("x",), dtype=lambda prop, t: (list(t), ["int64"], []),
     grad=_zero_grad, deps="", base=_ValueShapedProperty, shape_from_values=_from_values,
     doc="``npx.nonzero``: the indices of the nonzero entries, one row per entry (int64, shape "
         "(count, ndim); a 0-d input counts as 1-d). The row count depends on the values.")
