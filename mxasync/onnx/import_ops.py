"""ONNX operators to mxasync symbols: ``TRANSLATORS[op_type](importer, node, attrs)`` returns the
node's output symbols (or None after recording constant outputs in ``importer.consts``).

Covers what ``mx.onnx.export_model`` writes and the common operators of models from other
frameworks; the recurrent ones are in :mod:`.import_rnn`.
"""

from __future__ import annotations

import numpy as np

from ._symbols import S
from ._translate import node_input, node_name, registrar
from .import_rnn import recurrent
from .import_shape_ops import SHAPE_TRANSLATORS

__all__ = ["TRANSLATORS"]

TRANSLATORS: dict = {}
_reg = registrar(TRANSLATORS)


# -- elementwise ---------------------------------------------------------------------------------
_UNARY = {"Relu": ("Activation", {"act_type": "relu"}), "Sigmoid": ("Activation", {"act_type": "sigmoid"}),
          "Tanh": ("Activation", {"act_type": "tanh"}), "Softplus": ("Activation", {"act_type": "softrelu"}),
          "Softsign": ("Activation", {"act_type": "softsign"}), "Exp": ("exp", {}), "Log": ("log", {}),
          "Sqrt": ("sqrt", {}), "Abs": ("abs", {}), "Neg": ("negative", {}), "Erf": ("erf", {}),
          "Reciprocal": ("reciprocal", {}), "Floor": ("floor", {}), "Ceil": ("ceil", {}), "Sin": ("sin", {}),
          "Cos": ("cos", {}), "Tan": ("tan", {}), "Asin": ("arcsin", {}), "Acos": ("arccos", {}),
          "Atan": ("arctan", {}), "Sign": ("sign", {}), "Not": ("logical_not", {}), "Identity": ("_copy", {})}


@_reg(*_UNARY)
def unary(imp, node, attrs):
    op, kw = _UNARY[node.op_type]
    return getattr(S, op)(node_input(imp, node, 0), name=node_name(imp, node), **kw)


_BINARY = {"Add": ("broadcast_add", "_plus_scalar", "_plus_scalar"),
           "Sub": ("broadcast_sub", "_minus_scalar", "_rminus_scalar"),
           "Mul": ("broadcast_mul", "_mul_scalar", "_mul_scalar"),
           "Div": ("broadcast_div", "_div_scalar", "_rdiv_scalar"),
           "Pow": ("broadcast_power", "_power_scalar", "_rpower_scalar"),
           "Max": ("broadcast_maximum", "_maximum_scalar", "_maximum_scalar"),
           "Min": ("broadcast_minimum", "_minimum_scalar", "_minimum_scalar")}


@_reg(*_BINARY)
def binary(imp, node, attrs):
    op, right, left = _BINARY[node.op_type]
    a, b = imp.const(node.input[0]), imp.const(node.input[1])
    name = node_name(imp, node)
    if a is not None and b is not None:  # both constant: fold
        fold = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide, "Pow": np.power,
                "Max": np.maximum, "Min": np.minimum}[node.op_type]
        imp.consts[node.output[0]] = fold(a, b).astype(a.dtype)
        return None
    if len(node.input) > 2:  # Max/Min/Sum of many
        out = node_input(imp, node, 0)
        for i in range(1, len(node.input)):
            out = getattr(S, op)(out, node_input(imp, node, i))
        return out
    if b is not None and b.size == 1:
        return getattr(S, right)(node_input(imp, node, 0), scalar=float(b.reshape(-1)[0]), name=name)
    if a is not None and a.size == 1:
        return getattr(S, left)(node_input(imp, node, 1), scalar=float(a.reshape(-1)[0]), name=name)
    return getattr(S, op)(node_input(imp, node, 0), node_input(imp, node, 1), name=name)


@_reg("Sum")
def sum_(imp, node, attrs):
    return S.add_n(*[imp.sym(i) for i in node.input], name=node_name(imp, node))


@_reg("Mean")
def mean_(imp, node, attrs):
    total = S.add_n(*[imp.sym(i) for i in node.input])
    return S._div_scalar(total, scalar=float(len(node.input)), name=node_name(imp, node))


@_reg("Clip")
def clip(imp, node, attrs):
    lo, hi = attrs.get("min", -np.inf), attrs.get("max", np.inf)
    if len(node.input) > 1 and node.input[1]:
        lo = imp.const(node.input[1])
    if len(node.input) > 2 and node.input[2]:
        hi = imp.const(node.input[2])
    if lo is None or hi is None:
        raise imp.fail(node, "min and max must be constants")
    return S.clip(node_input(imp, node, 0), a_min=float(np.reshape(lo, -1)[0]), a_max=float(np.reshape(hi, -1)[0]),
                  name=node_name(imp, node))


@_reg("LeakyRelu", "Elu", "Selu")
def leaky(imp, node, attrs):
    kind = {"LeakyRelu": "leaky", "Elu": "elu", "Selu": "selu"}[node.op_type]
    slope = attrs.get("alpha", 0.01 if kind == "leaky" else 1.0)
    return S.LeakyReLU(node_input(imp, node, 0), act_type=kind, slope=float(slope), name=node_name(imp, node))


@_reg("PRelu")
def prelu(imp, node, attrs):
    slope = imp.const(node.input[1])
    if slope is None:
        raise imp.fail(node, "the slope must be a constant")
    gamma = imp.param(node.input[1] + "_gamma", slope.reshape(-1))
    return S.LeakyReLU(node_input(imp, node, 0), gamma, act_type="prelu", name=node_name(imp, node))


@_reg("HardSigmoid")
def hard_sigmoid(imp, node, attrs):
    return S.hard_sigmoid(node_input(imp, node, 0), alpha=attrs.get("alpha", 0.2), beta=attrs.get("beta", 0.5),
                          name=node_name(imp, node))


@_reg("Softmax", "LogSoftmax")
def softmax(imp, node, attrs):
    axis = attrs.get("axis", -1 if imp.opset >= 13 else 1)
    op = S.softmax if node.op_type == "Softmax" else S.log_softmax
    if imp.opset < 13 and axis != -1:  # the old form flattens from `axis`: exact for the last axis only
        shape = imp.shapes.get(node.input[0])
        if not shape or axis % len(shape) != len(shape) - 1:
            flat = S.Flatten(node_input(imp, node, 0)) if axis == 1 else None
            if flat is None:
                raise imp.fail(node, f"opset {imp.opset} Softmax over axis {axis} of an unknown rank")
            return S.reshape_like(op(flat, axis=-1), node_input(imp, node, 0), name=node_name(imp, node))
        axis = -1
    return op(node_input(imp, node, 0), axis=axis, name=node_name(imp, node))


@_reg("Cast")
def cast(imp, node, attrs):
    from onnx import helper

    dtype = np.dtype(helper.tensor_dtype_to_np_dtype(attrs["to"]))
    c = imp.const(node.input[0])
    if c is not None:
        imp.consts[node.output[0]] = c.astype(dtype)
        return None
    return S.Cast(node_input(imp, node, 0), dtype=dtype.name, name=node_name(imp, node))


@_reg("Dropout")
def dropout(imp, node, attrs):
    return S._copy(node_input(imp, node, 0), name=node_name(imp, node))


# -- layers --------------------------------------------------------------------------------------
def _pads(imp, node, attrs, n):
    if attrs.get("auto_pad", "NOTSET") not in ("NOTSET", "VALID"):
        raise imp.fail(node, f"auto_pad={attrs['auto_pad']} is not supported")
    pads = list(attrs.get("pads", [0] * 2 * n))
    if pads[:n] != pads[n:]:
        raise imp.fail(node, f"asymmetric pads {pads} are not supported")
    return tuple(pads[:n])


def _weight_shape(imp, node, i):
    shape = imp.shapes.get(node.input[i])
    if shape is None:
        raise imp.fail(node, f"the shape of {node.input[i]!r} must be known (an initializer or a typed input)")
    return shape


@_reg("Conv", "ConvTranspose")
def conv(imp, node, attrs):
    w = _weight_shape(imp, node, 1)
    n = len(w) - 2
    kernel = tuple(attrs.get("kernel_shape", w[2:]))
    group = int(attrs.get("group", 1))
    kw = dict(kernel=kernel, stride=tuple(attrs.get("strides", [1] * n)), dilate=tuple(attrs.get("dilations", [1] * n)),
              pad=_pads(imp, node, attrs, n), num_group=group, no_bias=len(node.input) < 3 or not node.input[2])
    ins = [imp.sym(i) for i in node.input if i]
    if node.op_type == "Conv":
        return S.Convolution(*ins, num_filter=w[0], name=node_name(imp, node), **kw)
    if "output_shape" in attrs:
        kw["target_shape"] = tuple(attrs["output_shape"][-n:])
    kw["adj"] = tuple(attrs.get("output_padding", [0] * n))
    return S.Deconvolution(*ins, num_filter=w[1] * group, name=node_name(imp, node), **kw)


@_reg("BatchNormalization")
def batch_norm(imp, node, attrs):
    ins = [imp.sym(i) for i in node.input[:5]]
    return S.BatchNorm(*ins, eps=float(attrs.get("epsilon", 1e-5)), momentum=float(attrs.get("momentum", 0.9)),
                       fix_gamma=False, use_global_stats=True, name=node_name(imp, node))


@_reg("InstanceNormalization")
def instance_norm(imp, node, attrs):
    return S.InstanceNorm(*[imp.sym(i) for i in node.input[:3]], eps=float(attrs.get("epsilon", 1e-5)),
                          name=node_name(imp, node))


@_reg("LayerNormalization")
def layer_norm(imp, node, attrs):
    scale = imp.const(node.input[1])
    axis = attrs.get("axis", -1)
    shape = imp.shapes.get(node.input[0])
    if scale is not None and scale.ndim != 1 or (shape and axis % len(shape) != len(shape) - 1 and axis != -1):
        raise imp.fail(node, "only normalisation over the last axis is supported")
    beta = node_input(imp, node, 2) if len(node.input) > 2 and node.input[2] else \
        imp.param(node.input[1] + "_beta", np.zeros_like(scale))
    return S.LayerNorm(node_input(imp, node, 0), node_input(imp, node, 1), beta, axis=-1, eps=float(attrs.get("epsilon", 1e-5)),
                       name=node_name(imp, node))


@_reg("MaxPool", "AveragePool", "LpPool")
def pool(imp, node, attrs):
    kernel = tuple(attrs["kernel_shape"])
    n = len(kernel)
    kind = {"MaxPool": "max", "AveragePool": "avg", "LpPool": "lp"}[node.op_type]
    kw = dict(kernel=kernel, stride=tuple(attrs.get("strides", [1] * n)), pad=_pads(imp, node, attrs, n),
              pool_type=kind, pooling_convention="full" if attrs.get("ceil_mode", 0) else "valid")
    if any(d != 1 for d in attrs.get("dilations", [1] * n)):
        raise imp.fail(node, "dilated pooling is not supported")
    if kind == "avg":
        kw["count_include_pad"] = bool(attrs.get("count_include_pad", 0))
    if kind == "lp":
        kw["p_value"] = int(attrs.get("p", 2))
    return S.Pooling(node_input(imp, node, 0), name=node_name(imp, node), **kw)


@_reg("GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool")
def global_pool(imp, node, attrs):
    kind = {"GlobalAveragePool": "avg", "GlobalMaxPool": "max", "GlobalLpPool": "lp"}[node.op_type]
    extra = {"p_value": int(attrs.get("p", 2))} if kind == "lp" else {}
    return S.Pooling(node_input(imp, node, 0), kernel=(1, 1), global_pool=True, pool_type=kind, name=node_name(imp, node),
                     **extra)


@_reg("Gemm")
def gemm(imp, node, attrs):
    alpha, beta = float(attrs.get("alpha", 1.0)), float(attrs.get("beta", 1.0))
    a = node_input(imp, node, 0)
    if attrs.get("transA", 0):
        a = S.transpose(a)
    bval = imp.const(node.input[1])
    has_c = len(node.input) > 2 and node.input[2]
    name = node_name(imp, node)
    if bval is not None:
        w = bval if attrs.get("transB", 0) else bval.T
        weight = imp.sym(node.input[1]) if attrs.get("transB", 0) and alpha == 1 else \
            imp.param(node.input[1] + "_gemm", np.ascontiguousarray(w * alpha))
        cval = imp.const(node.input[2]) if has_c else None
        if has_c and cval is not None and cval.size == w.shape[0]:
            bias = imp.sym(node.input[2]) if beta == 1 and cval.ndim == 1 else \
                imp.param(node.input[2] + "_gemm", (cval * beta).reshape(-1))
            return S.FullyConnected(a, weight, bias, num_hidden=w.shape[0], name=name)
        out = S.FullyConnected(a, weight, num_hidden=w.shape[0], no_bias=True, name=None if has_c else name)
    else:
        out = S.linalg_gemm2(a, node_input(imp, node, 1), transpose_b=bool(attrs.get("transB", 0)), alpha=alpha)
    if has_c:
        c = node_input(imp, node, 2)
        out = S.broadcast_add(out, c if beta == 1 else S._mul_scalar(c, scalar=beta), name=name)
    return out


@_reg("MatMul")
def matmul(imp, node, attrs):
    bval = imp.const(node.input[1])
    name = node_name(imp, node)
    if bval is not None and bval.ndim == 2:
        weight = imp.param(node.input[1] + "_t", np.ascontiguousarray(bval.T))
        return S.FullyConnected(node_input(imp, node, 0), weight, num_hidden=bval.shape[1], no_bias=True, flatten=False,
                                name=name)
    a_shape, b_shape = imp.shapes.get(node.input[0]), imp.shapes.get(node.input[1])
    if a_shape and b_shape and len(a_shape) == len(b_shape) == 2:
        return S.dot(node_input(imp, node, 0), node_input(imp, node, 1), name=name)
    return S.batch_dot(node_input(imp, node, 0), node_input(imp, node, 1), name=name)


@_reg("LRN")
def lrn(imp, node, attrs):
    return S.LRN(node_input(imp, node, 0), alpha=attrs.get("alpha", 1e-4), beta=attrs.get("beta", 0.75),
                 knorm=attrs.get("bias", 1.0), nsize=attrs["size"], name=node_name(imp, node))


for _op in ("LSTM", "GRU", "RNN"):
    TRANSLATORS[_op] = recurrent
TRANSLATORS.update(SHAPE_TRANSLATORS)
