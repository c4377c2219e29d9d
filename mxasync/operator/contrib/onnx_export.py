"""ONNX converters of the contrib ops that map onto one ONNX op: ``AdaptiveAvgPooling2D`` (global or
whole-window average pooling) and ``BilinearResize2D`` (``Resize``, linear). Each is attached to its
op's registry entry (see :mod:`..onnx_protocol`)."""

from __future__ import annotations

import numpy as np

from ..onnx_protocol import onnx_converter


@onnx_converter("_contrib_AdaptiveAvgPooling2D")
def adaptive_avg_pooling(b) -> None:
    (h, w), (oh, ow) = b.in_shape(0)[2:], b.out_shape(0)[2:]
    if (oh, ow) == (1, 1):
        b.add("GlobalAveragePool", b.inputs[:1], b.outputs[:1])
        return
    if h % oh or w % ow:
        raise b.fail(f"adaptive pooling of {h}x{w} to {oh}x{ow} has windows of unequal size; ONNX has no such op")
    kernel = [h // oh, w // ow]
    b.add("AveragePool", b.inputs[:1], b.outputs[:1], kernel_shape=kernel, strides=kernel)


@onnx_converter("_contrib_BilinearResize2D")
def bilinear_resize(b) -> None:
    # MXNet's half-pixel positions below 0 read pixel 0, as ONNX Runtime's linear Resize does
    mode = "align_corners" if b.params.align_corners else "half_pixel"
    sizes = b.const(np.array(b.out_shape(0), np.int64), "sizes")
    if b.opset >= 13:  # roi and scales are optional inputs, left out
        roi = scales = ""
    else:  # Resize-11 wants them present; empty scales mean "use sizes"
        roi, scales = b.const(np.zeros(0, np.float32), "roi"), b.const(np.zeros(0, np.float32), "scales")
    b.add("Resize", [b.inputs[0], roi, scales, sizes], b.outputs[:1], mode="linear",
          coordinate_transformation_mode=mode)
