"""ONNX converters of the output layers: inference forms (the label inputs are dropped, as MXNet's
exporter drops them). Each is attached to its op's registry entry (see :mod:`..onnx_protocol`).
"""

from __future__ import annotations

import numpy as np

from ..onnx_protocol import onnx_converter


@onnx_converter("SoftmaxOutput")
def softmax_output(b) -> None:
    p = b.params
    x, out, ndim = b.inputs[0], b.outputs[:1], len(b.in_shape(0))
    if ndim <= 2:
        b.add("Softmax", [x], out, axis=ndim - 1 if b.opset < 13 else -1)
    elif p.multi_output:  # softmax over axis 1 of (N, C, ...)
        perm = [0] + list(range(2, ndim)) + [1]
        inv = [int(i) for i in np.argsort(perm)]
        s = b.add("Softmax", b.add("Transpose", [x], perm=perm), axis=-1)[0]
        b.add("Transpose", [s], out, perm=inv)
    elif p.preserve_shape:
        b.add("Softmax", [x], out, axis=-1) if b.opset >= 13 else _flat_softmax(b, x, out, ndim - 1)
    else:  # over everything after the batch axis
        _flat_softmax(b, x, out, 1)


def _flat_softmax(b, x: str, out: list[str], axis: int) -> None:
    flat = b.add("Flatten", [x], axis=axis)[0]
    s = b.add("Softmax", [flat], axis=-1)[0]
    b.add("Reshape", [s, b.add("Shape", [x])[0]], out)


@onnx_converter("LinearRegressionOutput", "MAERegressionOutput", "MakeLoss", "BlockGrad")
def identity(b) -> None:
    b.add("Identity", b.inputs[:1], b.outputs[:1])


@onnx_converter("LogisticRegressionOutput")
def logistic(b) -> None:
    b.add("Sigmoid", b.inputs[:1], b.outputs[:1])


@onnx_converter("ElementWiseSum")
def add_n(b) -> None:
    b.add("Sum", list(b.inputs), b.outputs[:1])
