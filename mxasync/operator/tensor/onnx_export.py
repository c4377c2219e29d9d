"""ONNX converters of the tensor ops: elementwise and broadcast arithmetic, scalar forms, unary math,
shape and layout, joins and splits, reductions, indexing, constants. Each is attached to its op's
registry entry (see :mod:`..onnx_protocol`).
"""

from __future__ import annotations

import numpy as np

from ..onnx_protocol import onnx_converter

_I64_MAX = np.iinfo(np.int64).max


def _i64(b, values, hint: str) -> str:
    return b.const(np.asarray(values, np.int64).reshape(-1), hint)


# -- elementwise -----------------------------------------------------------------------------------
_BINARY = {"Add": ("elemwise_add", "broadcast_add"), "Sub": ("elemwise_sub", "broadcast_sub"),
           "Mul": ("elemwise_mul", "broadcast_mul"), "Div": ("elemwise_div", "broadcast_div"),
           "Pow": ("_power", "broadcast_power"), "Max": ("_maximum", "broadcast_maximum"),
           "Min": ("_minimum", "broadcast_minimum")}


def _binary(onnx_op: str):
    def convert(b) -> None:
        b.add(onnx_op, b.inputs[:2], b.outputs[:1])

    convert.__name__ = onnx_op.lower()
    return convert


for _op, _names in _BINARY.items():
    onnx_converter(*_names)(_binary(_op))

# (onnx op, scalar on the left)
_SCALAR = {"_plus_scalar": ("Add", False), "_minus_scalar": ("Sub", False), "_rminus_scalar": ("Sub", True),
           "_mul_scalar": ("Mul", False), "_div_scalar": ("Div", False), "_rdiv_scalar": ("Div", True),
           "_power_scalar": ("Pow", False), "_rpower_scalar": ("Pow", True), "_maximum_scalar": ("Max", False),
           "_minimum_scalar": ("Min", False)}


def _scalar(onnx_op: str, left: bool):
    def convert(b) -> None:
        c = b.const(np.array(b.params.scalar, b.in_dtype(0)), "scalar")
        b.add(onnx_op, [c, b.inputs[0]] if left else [b.inputs[0], c], b.outputs[:1])

    convert.__name__ = onnx_op.lower() + "_scalar"
    return convert


for _op, (_onnx, _left) in _SCALAR.items():
    onnx_converter(_op)(_scalar(_onnx, _left))

_UNARY = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "exp": "Exp", "log": "Log", "sqrt": "Sqrt",
          "abs": "Abs", "negative": "Neg", "reciprocal": "Reciprocal", "floor": "Floor", "ceil": "Ceil",
          "erf": "Erf", "sin": "Sin", "cos": "Cos", "tan": "Tan", "arcsin": "Asin", "arccos": "Acos",
          "arctan": "Atan", "sinh": "Sinh", "cosh": "Cosh", "arcsinh": "Asinh", "arccosh": "Acosh",
          "arctanh": "Atanh", "sign": "Sign", "softsign": "Softsign", "_copy": "Identity", "logical_not": "Not"}


def _unary(onnx_op: str):
    def convert(b) -> None:
        b.add(onnx_op, b.inputs[:1], b.outputs[:1])

    convert.__name__ = onnx_op.lower()
    return convert


for _op, _onnx in _UNARY.items():
    onnx_converter(_op)(_unary(_onnx))


@onnx_converter("square")
def square(b) -> None:
    b.add("Mul", [b.inputs[0], b.inputs[0]], b.outputs[:1])


@onnx_converter("rsqrt")
def rsqrt(b) -> None:
    b.add("Reciprocal", b.add("Sqrt", b.inputs[:1]), b.outputs[:1])


@onnx_converter("clip")
def clip(b) -> None:
    dt = b.in_dtype(0)
    lo, hi = b.const(np.array(b.params.a_min, dt), "min"), b.const(np.array(b.params.a_max, dt), "max")
    b.add("Clip", [b.inputs[0], lo, hi], b.outputs[:1])


@onnx_converter("Cast")
def cast(b) -> None:
    b.add("Cast", b.inputs[:1], b.outputs[:1], to=np.dtype(b.params.dtype))


# -- shape and layout ------------------------------------------------------------------------------
@onnx_converter("Flatten")
def flatten(b) -> None:
    b.add("Flatten", b.inputs[:1], b.outputs[:1], axis=1)


@onnx_converter("Reshape")
def reshape(b) -> None:
    p = b.params
    codes = list(p.shape)
    if not p.reverse and all(c >= -1 for c in codes) and codes.count(-1) <= 1 and len(codes) >= 1:
        target = codes  # 0 copies the input's dimension and -1 is inferred, in ONNX as in MXNet
    else:  # MXNet's -2/-3/-4 or reverse: the export-time shape, keeping the batch free when it passes through
        target = list(b.out_shape(0))
        if target and b.in_shape(0) and target[0] == b.in_shape(0)[0]:
            target[0] = 0
    b.add("Reshape", [b.inputs[0], _i64(b, target, "shape")], b.outputs[:1])


@onnx_converter("transpose")
def transpose(b) -> None:
    axes = list(b.params.axes) or list(range(len(b.in_shape(0))))[::-1]
    b.add("Transpose", b.inputs[:1], b.outputs[:1], perm=[int(a) for a in axes])


@onnx_converter("SwapAxis")
def swap_axis(b) -> None:
    perm = list(range(len(b.in_shape(0))))
    d1, d2 = b.params.dim1 % len(perm), b.params.dim2 % len(perm)
    perm[d1], perm[d2] = perm[d2], perm[d1]
    b.add("Transpose", b.inputs[:1], b.outputs[:1], perm=perm)


def _axes_op(b, onnx_op: str, x: str, axes: list[int], out=None, **attrs) -> list[str]:
    """Squeeze/Unsqueeze/Reduce*: axes as an attribute before their opset moved it to an input."""
    moved = {"Squeeze": 13, "Unsqueeze": 13, "ReduceSum": 13}.get(onnx_op, 18)
    if b.opset >= moved:
        return b.add(onnx_op, [x, _i64(b, axes, "axes")], out, **attrs)
    return b.add(onnx_op, [x], out, axes=list(axes), **attrs)


@onnx_converter("expand_dims")
def expand_dims(b) -> None:
    axis = b.params.axis % (len(b.in_shape(0)) + 1)
    _axes_op(b, "Unsqueeze", b.inputs[0], [axis], b.outputs[:1])


@onnx_converter("squeeze")
def squeeze(b) -> None:
    shape = b.in_shape(0)
    axes = b.params.axis
    axes = [a % len(shape) for a in axes] if axes is not None else [i for i, s in enumerate(shape) if s == 1]
    _axes_op(b, "Squeeze", b.inputs[0], axes, b.outputs[:1])


@onnx_converter("Concat")
def concat(b) -> None:
    b.add("Concat", list(b.inputs), b.outputs[:1], axis=int(b.params.dim))


@onnx_converter("stack")
def stack(b) -> None:
    axis = b.params.axis % (len(b.in_shape(0)) + 1)
    parts = [_axes_op(b, "Unsqueeze", x, [axis])[0] for x in b.inputs]
    b.add("Concat", parts, b.outputs[:1], axis=axis)


@onnx_converter("SliceChannel")
def slice_channel(b) -> None:
    p = b.params
    axis = p.axis % len(b.in_shape(0))
    n = p.num_outputs
    size = b.in_shape(0)[axis] // n
    if b.opset >= 13:
        parts = b.add("Split", [b.inputs[0], _i64(b, [size] * n, "split")], None if p.squeeze_axis else b.outputs,
                      n_out=n, axis=axis)
    else:
        parts = b.add("Split", b.inputs[:1], None if p.squeeze_axis else b.outputs, n_out=n, axis=axis,
                      split=[size] * n)
    if p.squeeze_axis:
        for part, out in zip(parts, b.outputs, strict=False):
            _axes_op(b, "Squeeze", part, [axis], [out])


@onnx_converter("slice_axis")
def slice_axis(b) -> None:
    p = b.params
    end = _I64_MAX if p.end is None else p.end
    b.add("Slice", [b.inputs[0], _i64(b, [p.begin], "starts"), _i64(b, [end], "ends"), _i64(b, [p.axis], "axes")],
          b.outputs[:1])


@onnx_converter("slice")
def slice_(b) -> None:
    p = b.params
    n = len(p.begin)
    step = list(p.step) + [None] * (n - len(p.step))
    steps = [1 if s is None else s for s in step]
    starts = [(0 if s > 0 else -1) if v is None else v for v, s in zip(p.begin, steps, strict=False)]
    ends = [(_I64_MAX if s > 0 else -_I64_MAX) if v is None else v for v, s in zip(p.end, steps, strict=False)]
    b.add("Slice", [b.inputs[0], _i64(b, starts, "starts"), _i64(b, ends, "ends"), _i64(b, range(n), "axes"),
                    _i64(b, steps, "steps")], b.outputs[:1])


@onnx_converter("Pad")
def pad(b) -> None:
    p = b.params
    pw = list(p.pad_width)
    pads = pw[0::2] + pw[1::2]  # MXNet (begin, end) per axis -> ONNX all begins, then all ends
    ins = [b.inputs[0], _i64(b, pads, "pads")]
    if p.mode == "constant":
        ins.append(b.const(np.array(p.constant_value, b.in_dtype(0)), "value"))
    b.add("Pad", ins, b.outputs[:1], mode=p.mode)


# -- reductions ------------------------------------------------------------------------------------
_REDUCE = {"sum": "ReduceSum", "mean": "ReduceMean", "max": "ReduceMax", "min": "ReduceMin", "prod": "ReduceProd"}


def _reduce(onnx_op: str):
    def convert(b) -> None:
        p = b.params
        ndim = len(b.in_shape(0))
        axes = list(range(ndim)) if p.axis is None else [a % ndim for a in p.axis]
        if p.exclude:
            axes = [a for a in range(ndim) if a not in axes]
        _axes_op(b, onnx_op, b.inputs[0], axes, b.outputs[:1], keepdims=int(p.keepdims))

    convert.__name__ = onnx_op.lower()
    return convert


for _op, _onnx in _REDUCE.items():
    onnx_converter(_op)(_reduce(_onnx))


# -- indexing --------------------------------------------------------------------------------------
@onnx_converter("Embedding")
def embedding(b) -> None:
    idx = b.add("Cast", b.inputs[:1], to=np.dtype(np.int64))[0]
    b.add("Gather", [b.inputs[1], idx], b.outputs[:1], axis=0)


@onnx_converter("take")
def take(b) -> None:
    if b.params.mode == "wrap":
        raise b.fail("mode='wrap' cannot be exported")
    idx = b.add("Cast", [b.inputs[1]], to=np.dtype(np.int64))[0]
    n = b.in_shape(0)[b.params.axis]
    lo, hi = b.const(np.array(0, np.int64), "lo"), b.const(np.array(n - 1, np.int64), "hi")
    idx = b.add("Clip", [idx, lo, hi])[0]  # mode='clip' (the default); 'raise' cannot fail in ONNX
    b.add("Gather", [b.inputs[0], idx], b.outputs[:1], axis=int(b.params.axis))


@onnx_converter("where")
def where(b) -> None:
    cond = b.add("Cast", b.inputs[:1], to=np.dtype(bool))[0]
    b.add("Where", [cond, b.inputs[1], b.inputs[2]], b.outputs[:1])


@onnx_converter("shape_array")
def shape_array(b) -> None:
    b.add("Shape", b.inputs[:1], b.outputs[:1])


# -- constants -------------------------------------------------------------------------------------
def _filled(b, fill: float) -> None:
    p = b.params
    shape = [d if d else 1 for d in p.shape]  # MXNet's rule: an unknown (0) dimension becomes 1
    value = np.full(shape, fill, np.dtype(p.dtype))
    b.set_const(0, value)
    b.add("ConstantOfShape", [_i64(b, shape, "shape")], b.outputs[:1], value=value.reshape(-1)[:1])


onnx_converter("_zeros")(lambda b: _filled(b, 0.0))
onnx_converter("_ones")(lambda b: _filled(b, 1.0))
onnx_converter("_full")(lambda b: _filled(b, b.params.value))


@onnx_converter("zeros_like", "ones_like")
def fill_like(b) -> None:
    value = np.array([0 if b.op_name == "zeros_like" else 1], b.in_dtype(0))
    b.add("ConstantOfShape", b.add("Shape", b.inputs[:1]), b.outputs[:1], value=value)
