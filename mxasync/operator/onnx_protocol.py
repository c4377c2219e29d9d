"""How an op says what it is in ONNX, without the operator layer importing ``onnx``.

An op's ONNX converter is part of its definition: ``OperatorProperty.onnx_export`` holds a
plain function ``convert(b)`` that receives an :class:`OnnxBuilder` for one graph node and
adds the ONNX nodes computing that node's outputs. The exporter (``mxasync.onnx``) builds the
builder and finds converters only through the registry; the converters themselves live in one
sibling module per op family (``nn/onnx_export.py``, ``tensor/onnx_export.py``,
``loss/onnx_export.py``) and are attached with :func:`onnx_converter`.

>>> from mxasync.operator import get_op
>>> get_op("Convolution").prop_cls.onnx_export.__name__
'convolution'
>>> get_op("ctc_loss").prop_cls.onnx_export is None     # no converter: the exporter names op and node
True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from .registry import get_op

__all__ = ["OnnxBuilder", "onnx_converter"]


class OnnxBuilder(Protocol):
    """What a converter sees of the node it converts and of the ONNX graph being built."""

    name: str            #: the node's name (its first output tensor is named after it)
    op_name: str         #: the registered op name
    params: Any          #: the node's parsed :class:`~mxasync.operator.OpParam`
    inputs: list[str]    #: ONNX tensor names of the node's inputs (arguments, then aux states)
    outputs: list[str]   #: the tensor names the converter must produce, one per op output
    opset: int           #: the ONNX opset being written (12 to 17)
    dynamic: bool        #: whether input shapes may differ from the export-time ones

    def in_shape(self, i: int) -> tuple[int, ...]:
        """Input ``i``'s shape at export time (a dynamic export may run with another batch size)."""

    def in_dtype(self, i: int) -> np.dtype:
        """Input ``i``'s dtype."""

    def out_shape(self, i: int) -> tuple[int, ...]:
        """Output ``i``'s shape at export time."""

    def const_value(self, i: int) -> np.ndarray | None:
        """Input ``i``'s value when it is a constant (a parameter or a constant op's output), else None."""

    def const(self, value: Any, hint: str = "const", dtype: Any = None) -> str:
        """Add an initializer holding ``value``; returns its tensor name."""

    def add(self, op_type: str, inputs: Sequence[str], outputs: Sequence[str] | None = None,
            n_out: int = 1, **attrs: Any) -> list[str]:
        """Add an ONNX node (numpy array attributes become tensors); returns its output names
        (fresh ones when ``outputs`` is None)."""

    def set_const(self, index: int, value: np.ndarray) -> None:
        """Declare that output ``index`` always holds ``value`` (constant ops; lets consumers fold it)."""

    def fail(self, message: str) -> Exception:
        """An error naming the op and the node, to raise for a form ONNX cannot express."""


def onnx_converter(*op_names: str) -> Callable[[Callable], Callable]:
    """Decorator: ``fn(builder)`` becomes the ONNX converter of the ops ``op_names`` (their registry entry)."""

    def deco(fn: Callable) -> Callable:
        for name in op_names:
            get_op(name).prop_cls.onnx_export = staticmethod(fn)
        return fn

    return deco
