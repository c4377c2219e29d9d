"""NumPy-interface creation ops: full (zeros, ones), arange, eye, linspace, logspace, indices, full_like.

They take no input array; the context comes with the call (``ctx=``) and ``dtype`` is a name.

>>> from mxasync.operator import get_op
>>> get_op("_npi_arange").prepare(start=0, stop=5, step=2, dtype="float32").infer_shape([])[1]
[(3,)]
"""

from __future__ import annotations

from typing import Any, Optional

from ._npop import npop

__all__: list[str] = []

Shape = tuple[int, ...]


def _zero_grad(xp, p, og, ins, outs):
    return [None] * len(ins)


npop("_npi_full", lambda xp, p: xp.full(p.shape, p.value, dtype=p.dtype), arguments=(),
     params={"shape": (Shape, ()), "dtype": (str, "float32"), "value": (Any, 0.0)}, grad=_zero_grad,
     doc="An array of ``shape`` filled with ``value`` (``zeros``, ``ones``, ``full``, ``empty``).")
npop("_npi_arange", lambda xp, p: xp.arange(p.start, p.stop, p.step, dtype=p.dtype), arguments=(),
     params={"start": (float, 0.0), "stop": (Optional[float], None), "step": (float, 1.0), "dtype": (str, "float32")},
     grad=_zero_grad, doc="NumPy's ``arange``.")
npop("_npi_eye", lambda xp, p: xp.eye(p.N, p.M, p.k, dtype=p.dtype), arguments=(),
     params={"N": (int, 1), "M": (Optional[int], None), "k": (int, 0), "dtype": (str, "float32")},
     grad=_zero_grad, doc="NumPy's ``eye``.")


def _linspace(xp, p):
    return xp.linspace(p.start, p.stop, p.num, endpoint=p.endpoint).astype(p.dtype)


npop("_npi_linspace", _linspace, arguments=(),
     params={"start": (float, 0.0), "stop": (float, 1.0), "num": (int, 50), "endpoint": (bool, True),
             "dtype": (str, "float32")}, grad=_zero_grad, doc="NumPy's ``linspace``.")
npop("_npi_logspace", lambda xp, p: xp.logspace(p.start, p.stop, p.num, endpoint=p.endpoint, base=p.base)
     .astype(p.dtype), arguments=(),
     params={"start": (float, 0.0), "stop": (float, 1.0), "num": (int, 50), "endpoint": (bool, True),
             "base": (float, 10.0), "dtype": (str, "float32")}, grad=_zero_grad, doc="NumPy's ``logspace``.")
npop("_npi_indices", lambda xp, p: xp.indices(p.dimensions, dtype=p.dtype), arguments=(),
     params={"dimensions": (Shape, ()), "dtype": (str, "int64")}, grad=_zero_grad, doc="NumPy's ``indices``.")


def _full_like(xp, p, a):
    return xp.full(a.shape, p.fill_value, dtype=p.dtype or a.dtype)


npop("_npi_full_like", _full_like, params={"fill_value": (Any, 0.0), "dtype": (Optional[str], None)},
     grad=_zero_grad, doc="An array of ``a``'s shape filled with ``fill_value`` (``zeros_like``, ``ones_like``).")


def _copy(xp, p, a):
    return a.astype(p.dtype) if p.dtype else a.copy()


def _copy_grad(xp, p, og, ins, outs):
    return [og[0].astype(ins[0].dtype)] if ins[0].dtype.kind in "fc" else [None]


npop("_npi_copy", _copy, params={"dtype": (Optional[str], None)}, grad=_copy_grad, deps="og,in",
     doc="A copy of ``a`` (``dtype``: cast to it); the gradient is cast back.")
