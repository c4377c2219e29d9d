"""ONNX converters of the layer ops (convolution, pooling, dense, norms, activations); the RNN's is in
``onnx_rnn.py``. Each is attached to its op's registry entry (see :mod:`..onnx_protocol`).
"""

from __future__ import annotations

import math

import numpy as np

from ..onnx_protocol import onnx_converter


def _spatial(values, n: int, default: int) -> list[int]:
    return [int(v) for v in values] if values else [default] * n


def _check_layout(b, layout) -> None:
    if layout not in (None, "NCW", "NCHW", "NCDHW"):
        raise b.fail(f"layout {layout} cannot be exported (ONNX is channels-first)")


@onnx_converter("Convolution")
def convolution(b) -> None:
    p = b.params
    _check_layout(b, p.layout)
    n = len(p.kernel)
    b.add("Conv", b.inputs[:2] if p.no_bias else b.inputs[:3], b.outputs[:1], kernel_shape=list(p.kernel),
          strides=_spatial(p.stride, n, 1), dilations=_spatial(p.dilate, n, 1), pads=_spatial(p.pad, n, 0) * 2,
          group=p.num_group)


@onnx_converter("Deconvolution")
def deconvolution(b) -> None:
    p = b.params
    _check_layout(b, p.layout)
    n = len(p.kernel)
    attrs = dict(kernel_shape=list(p.kernel), strides=_spatial(p.stride, n, 1), dilations=_spatial(p.dilate, n, 1),
                 group=p.num_group)
    if p.target_shape:
        attrs["output_shape"] = list(b.out_shape(0)[2:])
    else:
        attrs.update(pads=_spatial(p.pad, n, 0) * 2, output_padding=_spatial(p.adj, n, 0))
    b.add("ConvTranspose", b.inputs[:2] if p.no_bias else b.inputs[:3], b.outputs[:1], **attrs)


@onnx_converter("BatchNorm")
def batch_norm(b) -> None:
    p = b.params
    if p.axis not in (1, 1 - len(b.in_shape(0))):
        raise b.fail(f"axis={p.axis} cannot be exported (ONNX normalises axis 1)")
    if p.output_mean_var:
        raise b.fail("output_mean_var=True cannot be exported")
    data, gamma, beta, mean, var = b.inputs[:5]
    if p.fix_gamma:  # MXNet's rule: gamma is taken as ones
        gamma = b.const(np.ones(b.in_shape(1), b.in_dtype(1)), "gamma_fixed")
    b.add("BatchNormalization", [data, gamma, beta, mean, var], b.outputs[:1], epsilon=float(p.eps))


@onnx_converter("InstanceNorm")
def instance_norm(b) -> None:
    b.add("InstanceNormalization", b.inputs[:3], b.outputs[:1], epsilon=float(b.params.eps))


@onnx_converter("LayerNorm")
def layer_norm(b) -> None:
    p = b.params
    if p.output_mean_var:
        raise b.fail("output_mean_var=True cannot be exported")
    ndim = len(b.in_shape(0))
    axis = p.axis % ndim
    data, gamma, beta = b.inputs[:3]
    if b.opset >= 17 and axis == ndim - 1:
        b.add("LayerNormalization", [data, gamma, beta], b.outputs[:1], axis=-1, epsilon=float(p.eps))
        return
    # mean and variance along the axis, then scale and shift broadcast along it
    mean = b.add("ReduceMean", [data], axes=[axis], keepdims=1)[0]
    diff = b.add("Sub", [data, mean])[0]
    var = b.add("ReduceMean", [b.add("Mul", [diff, diff])[0]], axes=[axis], keepdims=1)[0]
    eps = b.const(np.array(p.eps, b.in_dtype(0)), "eps")
    normed = b.add("Div", [diff, b.add("Sqrt", [b.add("Add", [var, eps])[0]])[0]])[0]
    if axis != ndim - 1:
        shape = b.const(np.array([-1] + [1] * (ndim - 1 - axis), np.int64), "param_shape")
        gamma = b.add("Reshape", [gamma, shape])[0]
        beta = b.add("Reshape", [beta, shape])[0]
    b.add("Add", [b.add("Mul", [normed, gamma])[0], beta], b.outputs[:1])


_ACT = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "softrelu": "Softplus", "softsign": "Softsign"}


@onnx_converter("Activation")
def activation(b) -> None:
    b.add(_ACT[b.params.act_type], b.inputs[:1], b.outputs[:1])


@onnx_converter("LeakyReLU")
def leaky_relu(b) -> None:
    p = b.params
    x, out = b.inputs[0], b.outputs[:1]
    if p.act_type == "leaky":
        b.add("LeakyRelu", [x], out, alpha=float(p.slope))
    elif p.act_type == "rrelu":  # inference: the mean slope
        b.add("LeakyRelu", [x], out, alpha=float(p.lower_bound + p.upper_bound) / 2)
    elif p.act_type == "elu":
        b.add("Elu", [x], out, alpha=float(p.slope))
    elif p.act_type == "selu":
        b.add("Selu", [x], out)
    elif p.act_type == "prelu":
        ndim, gamma = len(b.in_shape(0)), b.inputs[1]
        if ndim > 2:  # gamma (C,) applies along axis 1: shape it (C, 1, ...)
            gamma = b.add("Reshape", [gamma, b.const(np.array([-1] + [1] * (ndim - 2), np.int64), "slope_shape")])[0]
        b.add("PRelu", [x, gamma], out)
    else:  # gelu, erf form: 0.5 x (1 + erf(x / sqrt 2))
        dt = b.in_dtype(0)
        e = b.add("Erf", [b.add("Div", [x, b.const(np.array(math.sqrt(2.0), dt), "sqrt2")])[0]])[0]
        half_x = b.add("Mul", [x, b.const(np.array(0.5, dt), "half")])[0]
        b.add("Mul", [half_x, b.add("Add", [e, b.const(np.array(1.0, dt), "one")])[0]], out)


def _softmax(b, onnx_op: str, axis: int, x: str, out: list[str]) -> None:
    ndim = len(b.in_shape(0))
    axis %= ndim
    if b.opset >= 13 or axis == ndim - 1:
        b.add(onnx_op, [x], out, axis=axis if b.opset >= 13 else -1)
        return
    # opset 12's Softmax flattens from `axis`: move the axis last, softmax, move it back
    perm = [i for i in range(ndim) if i != axis] + [axis]
    inv = list(np.argsort(perm))
    t = b.add("Transpose", [x], perm=perm)[0]
    s = b.add(onnx_op, [t], axis=-1)[0]
    b.add("Transpose", [s], out, perm=[int(i) for i in inv])


def _scaled(b, x: str, temperature) -> str:
    if temperature is None or temperature == 1.0:
        return x
    return b.add("Div", [x, b.const(np.array(temperature, b.in_dtype(0)), "temperature")])[0]


@onnx_converter("softmax")
def softmax(b) -> None:
    p = b.params
    if p.use_length:
        raise b.fail("use_length=True cannot be exported")
    _softmax(b, "Softmax", p.axis, _scaled(b, b.inputs[0], p.temperature), b.outputs[:1])


@onnx_converter("log_softmax")
def log_softmax(b) -> None:
    p = b.params
    _softmax(b, "LogSoftmax", p.axis, _scaled(b, b.inputs[0], p.temperature), b.outputs[:1])


@onnx_converter("SoftmaxActivation")
def softmax_activation(b) -> None:
    _softmax(b, "Softmax", 1 if b.params.mode == "channel" else -1, b.inputs[0], b.outputs[:1])


@onnx_converter("Dropout")
def dropout(b) -> None:  # inference: the identity
    b.add("Identity", b.inputs[:1], b.outputs[:1])


@onnx_converter("LRN")
def lrn(b) -> None:
    p = b.params
    b.add("LRN", b.inputs[:1], b.outputs[:1], alpha=float(p.alpha), beta=float(p.beta), bias=float(p.knorm),
          size=int(p.nsize))


@onnx_converter("Pooling")
def pooling(b) -> None:
    p = b.params
    _check_layout(b, p.layout)
    x, out = b.inputs[0], b.outputs[:1]
    if p.global_pool:
        kind = {"max": "GlobalMaxPool", "avg": "GlobalAveragePool", "lp": "GlobalLpPool"}.get(p.pool_type)
        if kind is None:  # sum: the mean times the window size
            mean = b.add("GlobalAveragePool", [x])[0]
            size = float(np.prod(b.in_shape(0)[2:]))
            b.add("Mul", [mean, b.const(np.array(size, b.in_dtype(0)), "window")], out)
            return
        b.add(kind, [x], out, **({"p": int(p.p_value or 2)} if kind == "GlobalLpPool" else {}))
        return
    if p.pooling_convention == "same":
        raise b.fail("pooling_convention='same' cannot be exported")
    n = len(p.kernel)
    attrs = dict(kernel_shape=list(p.kernel), strides=_spatial(p.stride, n, 1), pads=_spatial(p.pad, n, 0) * 2)
    if p.pooling_convention == "full":
        attrs["ceil_mode"] = 1
    if p.pool_type == "max":
        b.add("MaxPool", [x], out, **attrs)
    elif p.pool_type == "lp":
        attrs.pop("ceil_mode", None)
        b.add("LpPool", [x], out, p=int(p.p_value or 2), **attrs)
    else:
        include = 1 if p.count_include_pad is None or p.count_include_pad else 0
        if p.pool_type == "avg":
            b.add("AveragePool", [x], out, count_include_pad=include, **attrs)
        else:  # sum: the padded mean times the window size
            mean = b.add("AveragePool", [x], count_include_pad=1, **attrs)[0]
            b.add("Mul", [mean, b.const(np.array(float(np.prod(p.kernel)), b.in_dtype(0)), "window")], out)


@onnx_converter("FullyConnected")
def fully_connected(b) -> None:
    p = b.params
    x, w = b.inputs[0], b.inputs[1]
    bias = [] if p.no_bias else [b.inputs[2]]
    ndim = len(b.in_shape(0))
    if p.flatten or ndim == 2:
        if ndim != 2:
            x = b.add("Flatten", [x], axis=1)[0]
        b.add("Gemm", [x, w, *bias], b.outputs[:1], transB=1)
        return
    wv = b.const_value(1)
    wt = b.const(wv.T, "weight_t") if wv is not None else b.add("Transpose", [w], perm=[1, 0])[0]
    if not bias:
        b.add("MatMul", [x, wt], b.outputs[:1])
    else:
        b.add("Add", [b.add("MatMul", [x, wt])[0], bias[0]], b.outputs[:1])


@onnx_converter("UpSampling")
def upsampling(b) -> None:
    p = b.params
    if p.sample_type != "nearest" or len(b.inputs) != 1:
        raise b.fail("only nearest upsampling of one input can be exported")
    scales = b.const(np.array([1.0, 1.0] + [float(p.scale)] * (len(b.in_shape(0)) - 2), np.float32), "scales")
    roi = b.const(np.zeros(0, np.float32), "roi")
    b.add("Resize", [b.inputs[0], roi, scales], b.outputs[:1], mode="nearest", nearest_mode="floor",
          coordinate_transformation_mode="asymmetric")


def _t_last(b, x: str, ndim: int) -> str:
    perm = list(range(ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return b.add("Transpose", [x], perm=perm)[0]


@onnx_converter("dot", "batch_dot")
def dot(b) -> None:
    p = b.params
    a, c = b.inputs[0], b.inputs[1]
    na, nc = len(b.in_shape(0)), len(b.in_shape(1))
    if b.op_name == "dot" and (na > 2 or nc > 2):
        raise b.fail("dot of arrays above 2-D cannot be exported (use batch_dot)")
    if p.transpose_a:
        a = _t_last(b, a, na)
    if p.transpose_b:
        c = _t_last(b, c, nc)
    b.add("MatMul", [a, c], b.outputs[:1])
