"""MXNet's legacy Python operators, ``mx.operator.PythonOp`` / ``NumpyOp`` / ``NDArrayOp`` (deprecated there
in favour of ``CustomOp``, still used by old examples), run here as ``Custom`` ops.

A subclass overrides ``forward(in_data, out_data)``, ``backward(out_grad, in_data, out_data, in_grad)``,
``infer_shape(in_shape) -> (in_shapes, out_shapes)``, ``list_arguments``, ``list_outputs``; calling an
instance (``get_symbol``) gives a Symbol. ``NumpyOp`` hands it NumPy arrays (``out_data[0][:] = ...``),
``NDArrayOp`` NDArrays. Each instance is registered as its own ``Custom`` op type.

>>> import numpy as np, mxasync as mx
>>> class Square(NumpyOp):
...     def forward(self, in_data, out_data):
...         out_data[0][:] = in_data[0] ** 2
...     def backward(self, out_grad, in_data, out_data, in_grad):
...         in_grad[0][:] = 2 * in_data[0] * out_grad[0]
>>> sym = Square()(mx.sym.Variable("x"), name="sq")
>>> sym.eval(x=mx.nd.array([1, 2, 3]))[0].asnumpy()
array([1., 4., 9.], dtype=float32)
"""

from __future__ import annotations

import itertools
import warnings
from typing import Any

import numpy as np

from .. import _seams
from .custom import CustomOp, CustomOpProp, register

__all__ = ["PythonOp", "NumpyOp", "NDArrayOp"]

_COUNTER = itertools.count()


class PythonOp:
    """Base class of MXNet's legacy Python operators (deprecated there: use ``CustomOp``)."""

    #: the instances whose symbols exist (MXNet keeps them alive the same way)
    _ref_holder: list = []

    def __init__(self, need_top_grad: bool = True) -> None:
        self.info_ = None
        self.need_top_grad_ = need_top_grad
        warnings.warn("PythonOp has been deprecated. Please use CustomOp", stacklevel=2)

    def __call__(self, *args: Any, **kwargs: Any):
        return self.get_symbol(*args, **kwargs)

    def get_symbol(self, *args: Any, **kwargs: Any):
        raise NotImplementedError("Must override this")

    def forward(self, in_data, out_data) -> None:
        out_data[0][:] = in_data[0]

    def backward(self, out_grad, in_data, out_data, in_grad) -> None:
        in_grad[0][:] = 1.0

    def infer_shape(self, in_shape):
        """``(in_shapes, out_shapes)``; default: one output shaped as the first input."""
        return in_shape, [in_shape[0]]

    def list_outputs(self) -> list[str]:
        return ["output"]

    def list_arguments(self) -> list[str]:
        return ["data"]

    def need_top_grad(self) -> bool:
        return self.need_top_grad_

    def declare_backward_dependency(self, out_grad, in_data, out_data) -> list:
        deps = list(out_grad) if self.need_top_grad() else []
        return deps + list(in_data) + list(out_data)

    def _custom_symbol(self, adapter: type[CustomOp], args: tuple, kwargs: dict):
        op = self

        class _Prop(CustomOpProp):
            def __init__(self) -> None:
                super().__init__(need_top_grad=op.need_top_grad())

            def list_arguments(self):
                return list(op.list_arguments())

            def list_outputs(self):
                return list(op.list_outputs())

            def infer_shape(self, in_shape):
                ins, outs = op.infer_shape(in_shape)
                return ins, outs, []

            def declare_backward_dependency(self, out_grad, in_data, out_data):
                return op.declare_backward_dependency(out_grad, in_data, out_data)

            def create_operator(self, ctx, in_shapes, in_dtypes):
                return adapter(op)

        op_type = f"_{type(self).__name__}_{next(_COUNTER)}"
        register(op_type)(_Prop)
        PythonOp._ref_holder.append(self)
        return _seams.symbol_op.get()("Custom", *args, op_type=op_type, **kwargs)


class _NumpyAdapter(CustomOp):
    def __init__(self, op: PythonOp) -> None:
        self.op = op

    def forward(self, is_train, req, in_data, out_data, aux):
        ins = [x.asnumpy() for x in in_data]
        outs = [np.zeros(y.shape, dtype=y.dtype) for y in out_data]
        self.op.forward(in_data=ins, out_data=outs)
        for dst, r, src in zip(out_data, req, outs, strict=True):
            self.assign(dst, r, src)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        ogs = [g.asnumpy() if g is not None else np.zeros(y.shape, y.dtype) for g, y in zip(out_grad, out_data,
                                                                                              strict=True)]
        grads = [np.zeros(g.shape, dtype=g.dtype) for g in in_grad]
        self.op.backward(out_grad=ogs, in_data=[x.asnumpy() for x in in_data],
                         out_data=[y.asnumpy() for y in out_data], in_grad=grads)
        for dst, r, src in zip(in_grad, req, grads, strict=True):
            self.assign(dst, r, src)


class _NDArrayAdapter(CustomOp):
    def __init__(self, op: PythonOp) -> None:
        self.op = op

    def forward(self, is_train, req, in_data, out_data, aux):
        self.op.forward(in_data=in_data, out_data=out_data)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.op.backward(out_grad=out_grad, in_data=in_data, out_data=out_data, in_grad=in_grad)


class NumpyOp(PythonOp):
    """A legacy Python operator computing on NumPy arrays: ``forward`` fills ``out_data`` in place,
    ``backward`` fills ``in_grad``."""

    def __init__(self, need_top_grad: bool = True) -> None:
        super().__init__(need_top_grad)
        warnings.warn("NumpyOp has been deprecated. Please use CustomOp", stacklevel=2)

    def get_symbol(self, *args: Any, **kwargs: Any):
        return self._custom_symbol(_NumpyAdapter, args, kwargs)


class NDArrayOp(PythonOp):
    """A legacy Python operator computing on NDArrays (``out_data[0][:] = ...``)."""

    def __init__(self, need_top_grad: bool = True) -> None:
        super().__init__(need_top_grad)
        warnings.warn("NDArrayOp has been deprecated. Please use CustomOp", stacklevel=2)

    def get_symbol(self, *args: Any, **kwargs: Any):
        return self._custom_symbol(_NDArrayAdapter, args, kwargs)
