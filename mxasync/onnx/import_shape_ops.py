"""ONNX shape, layout, indexing and constant operators to mxasync symbols (see :mod:`.import_ops`).

Shape arguments (Reshape's shape, Slice's starts, ...) must be constants, or, for Reshape, the
``Shape`` of another tensor. Operators whose inputs are all constant are computed at import.
"""

from __future__ import annotations

import numpy as np

from ._symbols import S
from ._translate import node_input, node_name, registrar
from .checks import check_constant

__all__ = ["SHAPE_TRANSLATORS"]

SHAPE_TRANSLATORS: dict = {}
_BIG = 2 ** 62
_reg = registrar(SHAPE_TRANSLATORS)


def _axes(imp, node, attrs, i=1):
    """Axes from the attribute (old opsets) or the i-th input (new ones)."""
    if "axes" in attrs:
        return [int(a) for a in attrs["axes"]]
    if len(node.input) > i and node.input[i]:
        value = imp.const(node.input[i])
        if value is None:
            raise imp.fail(node, "axes must be a constant")
        return [int(a) for a in value.reshape(-1)]
    return None


@_reg("Constant")
def constant(imp, node, attrs):
    from onnx import numpy_helper

    if "value" in attrs:
        value = numpy_helper.to_array(attrs["value"])
    elif "value_float" in attrs or "value_int" in attrs:
        value = np.array(attrs.get("value_float", attrs.get("value_int")))
    elif "value_floats" in attrs or "value_ints" in attrs:
        value = np.array(attrs.get("value_floats", attrs.get("value_ints")))
    else:
        raise imp.fail(node, f"unsupported constant attributes {sorted(attrs)}")
    imp.consts[node.output[0]] = value
    imp.shapes[node.output[0]] = value.shape


@_reg("Shape")
def shape(imp, node, attrs):
    if node.input[0] in imp.consts:
        imp.consts[node.output[0]] = np.array(imp.consts[node.input[0]].shape, np.int64)
        return None
    known = imp.shapes.get(node.input[0])
    if known and all(known):  # static: a constant (Reshape keeps the batch free, see below)
        imp.consts[node.output[0]] = np.array(known, np.int64)
        return None
    imp.shape_of[node.output[0]] = node_input(imp, node, 0)
    return S.shape_array(node_input(imp, node, 0), name=node_name(imp, node))


@_reg("Concat")
def concat(imp, node, attrs):
    values = [imp.const(i) for i in node.input]
    if all(v is not None for v in values):
        imp.consts[node.output[0]] = np.concatenate(values, axis=attrs["axis"])
        return None
    return S.Concat(*[imp.sym(i) for i in node.input], dim=attrs["axis"], num_args=len(node.input),
                    name=node_name(imp, node))


@_reg("Reshape")
def reshape(imp, node, attrs):
    if node.input[1] in imp.shape_of:
        return S.reshape_like(node_input(imp, node, 0), imp.shape_of[node.input[1]], name=node_name(imp, node))
    target = imp.const(node.input[1])
    if target is None:
        raise imp.fail(node, "the shape must be a constant (or the Shape of a tensor)")
    if attrs.get("allowzero", 0) and 0 in target:
        raise imp.fail(node, "allowzero=1 with a 0 in the shape is not supported")
    data = imp.const(node.input[0])
    if data is not None:
        out = np.reshape(data, [d if d else data.shape[i] for i, d in enumerate(target)])
        imp.consts[node.output[0]] = out
        return None
    target = [int(d) for d in target]
    known = imp.shapes.get(node.input[0])
    if known and target and known[0] and target[0] == known[0]:
        target[0] = 0  # the same for this shape, and any batch size passes through
    return S.Reshape(node_input(imp, node, 0), shape=tuple(target), name=node_name(imp, node))


@_reg("Flatten")
def flatten(imp, node, attrs):
    axis = attrs.get("axis", 1)
    shape = imp.shapes.get(node.input[0])
    if axis < 0 and shape:
        axis += len(shape)
    if axis == 1:
        return S.Flatten(node_input(imp, node, 0), name=node_name(imp, node))
    if axis == 0:
        return S.Reshape(node_input(imp, node, 0), shape=(1, -1), name=node_name(imp, node))
    if not shape or 0 in shape[axis:] or axis < 0:
        raise imp.fail(node, f"Flatten(axis={attrs.get('axis')}) needs the input's static shape")
    return S.Reshape(node_input(imp, node, 0), shape=(-1, int(np.prod(shape[axis:]))), name=node_name(imp, node))


@_reg("Transpose")
def transpose(imp, node, attrs):
    perm = attrs.get("perm")
    if perm and sorted(perm) != list(range(len(perm))):
        raise imp.fail(node, f"attribute 'perm' {list(perm)[:8]}{' ...' if len(perm) > 8 else ''} is not a "
                             f"permutation of 0..{len(perm) - 1}")
    return S.transpose(node_input(imp, node, 0), axes=tuple(perm) if perm else (), name=node_name(imp, node))


@_reg("Squeeze")
def squeeze(imp, node, attrs):
    axes = _axes(imp, node, attrs)
    return S.squeeze(node_input(imp, node, 0), axis=tuple(axes) if axes else None, name=node_name(imp, node))


@_reg("Unsqueeze")
def unsqueeze(imp, node, attrs):
    axes = sorted(_axes(imp, node, attrs))
    c = imp.const(node.input[0])
    if c is not None:
        for a in axes:
            c = np.expand_dims(c, a)
        imp.consts[node.output[0]] = c
        return None
    out = node_input(imp, node, 0)
    if any(a < 0 for a in axes):
        raise imp.fail(node, "negative axes are not supported")
    for k, a in enumerate(axes):
        out = S.expand_dims(out, axis=a, name=node_name(imp, node) if k == len(axes) - 1 else None)
    return out


@_reg("Gather")
def gather(imp, node, attrs):
    axis = attrs.get("axis", 0)
    data, idx = imp.const(node.input[0]), imp.const(node.input[1])
    if data is not None and idx is not None:
        imp.consts[node.output[0]] = np.take(data, idx, axis=axis)
        return None
    if data is not None and data.ndim == 2 and axis == 0:  # an embedding table
        return S.Embedding(node_input(imp, node, 1), node_input(imp, node, 0), input_dim=data.shape[0], output_dim=data.shape[1],
                           dtype=data.dtype.name, name=node_name(imp, node))
    return S.take(node_input(imp, node, 0), node_input(imp, node, 1), axis=axis, mode="wrap", name=node_name(imp, node))


@_reg("Slice")
def slice_(imp, node, attrs):
    if "starts" in attrs:  # opset < 10
        starts, ends, axes, steps = attrs["starts"], attrs["ends"], attrs.get("axes"), None
    else:
        vals = [imp.const(node.input[i]) if len(node.input) > i and node.input[i] else None for i in range(1, 5)]
        if vals[0] is None or vals[1] is None:
            raise imp.fail(node, "starts and ends must be constants")
        starts, ends, axes, steps = vals
    starts, ends = [int(s) for s in np.reshape(starts, -1)], [int(e) for e in np.reshape(ends, -1)]
    axes = list(range(len(starts))) if axes is None else [int(a) for a in np.reshape(axes, -1)]
    steps = [1] * len(starts) if steps is None else [int(s) for s in np.reshape(steps, -1)]
    data = imp.const(node.input[0])
    if data is not None:
        index = [slice(None)] * data.ndim
        for s, e, a, st in zip(starts, ends, axes, steps, strict=True):
            index[a] = slice(s, e, st)
        imp.consts[node.output[0]] = data[tuple(index)]
        return None
    out = node_input(imp, node, 0)
    for k, (s, e, a, st) in enumerate(zip(starts, ends, axes, steps, strict=True)):
        name = node_name(imp, node) if k == len(axes) - 1 else None
        if st == 1:
            out = S.slice_axis(out, axis=a, begin=s, end=None if e >= _BIG else e, name=name)
        elif a >= 0:
            none = (None,) * a
            end = None if abs(e) >= _BIG else e
            out = S.slice(out, begin=none + (s,), end=none + (end,), step=none + (st,), name=name)
        else:
            raise imp.fail(node, "a stepped slice on a negative axis is not supported")
    return out


@_reg("Pad")
def pad(imp, node, attrs):
    pads = attrs.get("pads")
    if pads is None:
        pads = imp.const(node.input[1])
        if pads is None:
            raise imp.fail(node, "pads must be a constant")
    pads = [int(p) for p in np.reshape(pads, -1)]
    n = len(pads) // 2
    width = tuple(v for pair in zip(pads[:n], pads[n:], strict=True) for v in pair)
    value = attrs.get("value", 0.0)
    if len(node.input) > 2 and node.input[2]:
        value = float(np.asarray(imp.const(node.input[2])).reshape(-1)[0])
    mode = attrs.get("mode", "constant")
    return S.Pad(node_input(imp, node, 0), mode=mode, pad_width=width, constant_value=float(value), name=node_name(imp, node))


@_reg("Resize", "Upsample")
def resize(imp, node, attrs):
    if attrs.get("mode", "nearest") != "nearest":
        raise imp.fail(node, f"mode {attrs.get('mode')!r} is not supported (nearest only)")
    scales = None
    for i in (2, 1):  # Resize: (X, roi, scales, sizes); Upsample: (X, scales)
        if len(node.input) > i and node.input[i]:
            v = imp.const(node.input[i])
            if v is not None and v.size:
                scales = v
                break
    shape = imp.shapes.get(node.input[0])
    if scales is None and len(node.input) > 3 and node.input[3] and shape:
        scales = imp.const(node.input[3]) / np.maximum(np.array(shape, np.float64), 1)
    if scales is None or len(scales) < 3 or np.any(scales[:2] != 1) or len(set(scales[2:].tolist())) != 1 \
            or float(scales[2]) != int(scales[2]):
        raise imp.fail(node, f"only one integer scale on the spatial axes is supported, got {scales}")
    return S.UpSampling(node_input(imp, node, 0), scale=int(scales[2]), sample_type="nearest", num_args=1,
                        name=node_name(imp, node))


@_reg("Split")
def split(imp, node, attrs):
    axis = attrs.get("axis", 0)
    sizes = attrs.get("split")
    if sizes is None and len(node.input) > 1 and node.input[1]:
        sizes = imp.const(node.input[1])
    n = len(node.output)
    if sizes is None or len(set(int(s) for s in np.reshape(sizes, -1))) == 1:
        parts = S.SliceChannel(node_input(imp, node, 0), num_outputs=n, axis=axis, name=node_name(imp, node))
        return [parts[i] for i in range(n)]
    bounds = np.cumsum([0] + [int(s) for s in np.reshape(sizes, -1)])
    return [S.slice_axis(node_input(imp, node, 0), axis=axis, begin=int(bounds[i]), end=int(bounds[i + 1]))
            for i in range(n)]


_REDUCE = {"ReduceMean": "mean", "ReduceSum": "sum", "ReduceMax": "max", "ReduceMin": "min", "ReduceProd": "prod"}


@_reg(*_REDUCE)
def reduce(imp, node, attrs):
    axes = _axes(imp, node, attrs)
    if axes is None and attrs.get("noop_with_empty_axes", 0):
        return S._copy(node_input(imp, node, 0), name=node_name(imp, node))
    return getattr(S, _REDUCE[node.op_type])(node_input(imp, node, 0), axis=tuple(axes) if axes else None,
                                               keepdims=bool(attrs.get("keepdims", 1)), name=node_name(imp, node))


@_reg("ConstantOfShape")
def constant_of_shape(imp, node, attrs):
    from onnx import numpy_helper

    shape = imp.const(node.input[0])
    if shape is None:
        raise imp.fail(node, "the shape must be a constant")
    value = numpy_helper.to_array(attrs["value"]) if "value" in attrs else np.zeros(1, np.float32)
    check_constant(node, [int(d) for d in shape.reshape(-1)], value.dtype)
    imp.consts[node.output[0]] = np.full([int(d) for d in shape], value.reshape(-1)[0], value.dtype)
    imp.shapes[node.output[0]] = tuple(int(d) for d in shape)
