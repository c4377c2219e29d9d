"""Regenerate the MXNet 1.9.1 reference fixtures of ``tests/operator/test_layout_ops.py``. Run by hand only:

    /work/venvs/mx191/bin/python tests/operator/fixtures_layout/make_fixtures.py

It needs the real ``mxnet`` 1.9.1 (never a dependency of mxasync). Each case runs one op
under ``mx.autograd`` with a fixed head gradient and stores ``<case>/<name>`` arrays
(inputs ``in0``, ``in1``..., outputs ``out0``..., the heads ``head0``... and input gradients
``grad0``...) plus a ``<case>/spec`` JSON string: the op name as mxasync spells it, its
params, and the input names whose gradients MXNet records.
"""

from __future__ import annotations

import json
from pathlib import Path

import mxnet as mx
import numpy as np

HERE = Path(__file__).resolve().parent
rng = np.random.default_rng(20240917)
store: dict[str, np.ndarray] = {}


def rand(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def record(case: str, op: str, mx_fn, inputs: list[np.ndarray], params: dict, grads: tuple[int, ...] = (0,)):
    """Run ``mx_fn(*inputs, **params)`` with autograd; store inputs, outputs, heads and gradients."""
    xs = [mx.nd.array(x, dtype=x.dtype) for x in inputs]
    for i in grads:
        xs[i].attach_grad()
    with mx.autograd.record():
        out = mx_fn(*xs, **params)
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        heads = [mx.nd.array(rng.uniform(0.5, 1.5, o.shape).astype(np.float32)) for o in outs]
    if grads:
        mx.autograd.backward(outs, heads)
    for i, x in enumerate(inputs):
        store[f"{case}/in{i}"] = x
    for i, (o, h) in enumerate(zip(outs, heads, strict=True)):
        store[f"{case}/out{i}"] = o.asnumpy()
        store[f"{case}/head{i}"] = h.asnumpy()
    for i in grads:
        store[f"{case}/grad{i}"] = xs[i].grad.asnumpy()
    store[f"{case}/spec"] = np.array(json.dumps(dict(op=op, params=params, grads=list(grads))))


nd = mx.nd
# Pad: every mode, 4-D and 5-D, with widths up to (size - 1) for reflect
for mode in ("constant", "edge", "reflect"):
    extra = dict(constant_value=-1.5) if mode == "constant" else {}
    record(f"pad4_{mode}", "Pad", nd.Pad, [rand(2, 2, 3, 4)],
           dict(mode=mode, pad_width=(0, 0, 0, 0, 2, 1, 3, 2), **extra))
    record(f"pad5_{mode}", "Pad", nd.Pad, [rand(1, 2, 3, 2, 4)],
           dict(mode=mode, pad_width=(0, 0, 0, 0, 1, 2, 1, 0, 2, 3), **extra))
# depth_to_space / space_to_depth: the channel order
record("d2s_2", "depth_to_space", nd.depth_to_space, [rand(2, 8, 2, 3)], dict(block_size=2))
record("d2s_3", "depth_to_space", nd.depth_to_space, [rand(1, 18, 2, 1)], dict(block_size=3))
record("s2d_2", "space_to_depth", nd.space_to_depth, [rand(2, 3, 4, 6)], dict(block_size=2))
# reshape_like with ranges (the docstring's cases and negative indices)
for i, (ls, rs, p) in enumerate([
    ((30, 7), (15, 2, 4), dict(lhs_begin=0, lhs_end=1, rhs_begin=0, rhs_end=2)),
    ((3, 5), (1, 15, 4), dict(lhs_begin=0, lhs_end=2, rhs_begin=1, rhs_end=2)),
    ((30, 12), (4, 2, 2, 3), dict(lhs_begin=-1, lhs_end=None, rhs_begin=1, rhs_end=None)),
    ((2, 3, 4), (4, 12), dict(lhs_begin=1, rhs_begin=-1)),
    ((2, 3, 4), (6, 2, 2), dict(lhs_end=-1, rhs_end=1)),
    ((2, 3, 4), (4, 6), {}),
]):
    record(f"reshape_like_{i}", "reshape_like", nd.reshape_like, [rand(*ls), rand(*rs)], p, grads=(0, 1))
# broadcast_like and slice_like
record("broadcast_like_full", "broadcast_like", nd.broadcast_like, [rand(1, 3, 1), rand(2, 3, 4)], {}, (0, 1))
record("broadcast_like_axes", "broadcast_like", nd.broadcast_like, [rand(1, 3, 1), rand(5, 4)],
       dict(lhs_axes=(0, -1), rhs_axes=(-1, 1)), (0, 1))
record("slice_like_all", "slice_like", nd.slice_like, [rand(3, 4, 5), rand(2, 3, 4)], {}, (0, 1))
record("slice_like_axes", "slice_like", nd.slice_like, [rand(3, 4, 5), rand(2, 1, 4)], dict(axes=(0, -1)), (0, 1))
# split_v2: the nd wrapper (indices_or_sections) and the raw op's indices / sections
x = rand(6, 4)


def split_v2(a, indices_or_sections, **kw):
    return nd.split_v2(a, indices_or_sections, **kw)


for name, ios, p in [("sections", 3, dict(axis=0)), ("indices", (2, 3), dict(axis=0)),
                     ("indices_axis1", (1,), dict(axis=1)), ("squeeze", 4, dict(axis=1, squeeze_axis=True)),
                     ("empty_part", (2, 2), dict(axis=0))]:
    record(f"split_v2_{name}", "split_v2", split_v2, [x], dict(p, indices_or_sections=ios))
record("split_v2_raw", "_split_v2", nd._internal._split_v2, [rand(2, 6, 3)], dict(indices=(0, 1, 4), axis=1))
record("split_v2_raw_sections", "_split_v2", nd._internal._split_v2, [rand(2, 6, 3)],
       dict(indices=(), sections=2, axis=-2))
# softmin (temperature, axis, dtype), SwapAxis, reverse, argmax_channel
record("softmin", "softmin", nd.softmin, [rand(3, 5)], {})
record("softmin_axis0_t", "softmin", nd.softmin, [rand(3, 4, 2)], dict(axis=0, temperature=2.5))
record("softmin_f64", "softmin", nd.softmin, [rand(2, 3)], dict(dtype="float64"), ())
record("swapaxes", "SwapAxis", nd.SwapAxis, [rand(2, 3, 4)], dict(dim1=-1, dim2=0))
record("reverse", "reverse", nd.reverse, [rand(2, 3, 4)], dict(axis=(0, 2)))
record("reverse_twice", "reverse", nd.flip, [rand(2, 3)], dict(axis=(1, 1, 0)))
record("argmax_channel", "argmax_channel", nd.argmax_channel,
       [np.array([[1, 5, 5], [7, 7, 0]], np.float32)], {}, ())
record("argmax_channel_3d", "argmax_channel", nd.argmax_channel, [rand(2, 3, 4)], {}, ())
# slice_assign (MXNet has no gradient for it: forward only)
record("slice_assign", "_slice_assign", nd._internal._slice_assign, [rand(4, 6), rand(2, 3)],
       dict(begin=(1, 0), end=(3, 6), step=(1, 2)), ())
record("slice_assign_neg", "_slice_assign", nd._internal._slice_assign, [rand(4, 6), rand(2, 2)],
       dict(begin=(3, 4), end=(1, 2), step=(-1, -1)), ())
record("slice_assign_scalar", "_slice_assign_scalar", nd._internal._slice_assign_scalar, [rand(4, 6)],
       dict(scalar=7.0, begin=(None, 1), end=(None, -1), step=(None, 2)), ())

np.savez_compressed(HERE / "mxnet_ref.npz", **store)
print(f"wrote {len(store)} arrays to {HERE / 'mxnet_ref.npz'}")
