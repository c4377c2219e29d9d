"""Table rows: shape, join/split and indexing ops."""

from __future__ import annotations

import numpy as np
from cases import Case, integers, uniform

X = [((2, 3, 4),)]


def _reshape_ref(x, shape=(), reverse=False):
    from mxasync.operator.tensor.shape import reshape_shape

    return x.reshape(reshape_shape(x.shape, shape, reverse))


CASES = [
    Case("Reshape", X, ref=lambda x, shape, reverse=False: x.reshape(6, 4), params=dict(shape=(-3, -2)), name="Reshape-3"),
    Case("Reshape", X, ref=lambda x, shape: x.reshape(2, 12), params=dict(shape=(0, -1)), name="Reshape0"),
    Case("Reshape", X, ref=lambda x, shape: x.reshape(2, 3, 2, 2), params=dict(shape=(0, 0, -4, 2, -1)),
         name="Reshape-4"),
    Case("Reshape", X, ref=lambda x, shape, reverse: x.reshape(6, 4), params=dict(shape=(-1, 0), reverse=True),
         name="Reshape-rev"),
    Case("Flatten", [((2, 3, 4),), ((5, 2),)], ref=lambda x: x.reshape(x.shape[0], -1)),
    Case("transpose", X, ref=lambda x: x.T),
    Case("transpose", X, ref=lambda x, axes: x.transpose(axes), params=dict(axes=(1, 0, 2)), name="transpose-axes"),
    Case("expand_dims", X, ref=lambda x, axis: np.expand_dims(x, axis), params=dict(axis=1)),
    Case("expand_dims", X, ref=lambda x, axis: np.expand_dims(x, axis), params=dict(axis=-1), name="expand_dims-1"),
    Case("squeeze", [((2, 1, 3, 1),)], ref=lambda x: np.squeeze(x)),
    Case("squeeze", [((2, 1, 3, 1),)], ref=lambda x, axis: np.squeeze(x, axis), params=dict(axis=(1,)),
         name="squeeze-axis"),
    Case("broadcast_to", [((2, 1, 3),)], ref=lambda x, shape: np.broadcast_to(x, (2, 4, 3)),
         params=dict(shape=(0, 4, 3))),
    Case("broadcast_axis", [((2, 1, 1),)], ref=lambda x, axis, size: np.broadcast_to(x, (2, 3, 4)),
         params=dict(axis=(1, 2), size=(3, 4))),
    Case("tile", [((2, 3),)], ref=lambda x, reps: np.tile(x, reps), params=dict(reps=(2, 1, 2))),
    Case("repeat", [((2, 3),)], ref=lambda x, repeats, axis: np.repeat(x, repeats, axis), params=dict(repeats=2, axis=1)),
    Case("repeat", [((2, 3),)], ref=lambda x, repeats: np.repeat(x, repeats), params=dict(repeats=3),
         name="repeat-flat"),
    Case("Concat", [((2, 3), (2, 2), (2, 1))], ref=lambda *xs, num_args, dim: np.concatenate(xs, dim),
         params=dict(num_args=3, dim=1)),
    Case("stack", [((2, 3), (2, 3))], ref=lambda *xs, num_args, axis: np.stack(xs, axis),
         params=dict(num_args=2, axis=1)),
    Case("SliceChannel", [((2, 6, 2),)], ref=lambda x, num_outputs, axis: tuple(np.split(x, num_outputs, axis)),
         params=dict(num_outputs=3, axis=1)),
    Case("SliceChannel", [((2, 3, 2),)],
         ref=lambda x, num_outputs, axis, squeeze_axis: tuple(np.squeeze(q, axis) for q in np.split(x, 3, axis)),
         params=dict(num_outputs=3, axis=1, squeeze_axis=True), name="split-squeeze"),
    Case("slice", [((4, 5, 2),)], ref=lambda x, begin, end, step: x[1:4:2, 4:0:-2],
         params=dict(begin=(1, 4), end=(4, 0), step=(2, -2))),
    Case("slice", [((4, 5),)], ref=lambda x, begin, end: x[:, 1:-1], params=dict(begin=(None, 1), end=(None, -1)),
         name="slice-none"),
    Case("slice_axis", [((3, 5),)], ref=lambda x, axis, begin, end: x[:, 1:4], params=dict(axis=1, begin=1, end=4)),
    Case("slice_axis", [((3, 5),)], ref=lambda x, axis, begin, end: x[1:], params=dict(axis=0, begin=1, end=None),
         name="slice_axis-none"),
    Case("take", [((5, 3), (2, 2))], ref=lambda a, i: np.take(a, np.clip(i.astype(int), 0, 4), axis=0),
         gens=[uniform(), integers(-1, 7)], wrt=(0,)),
    Case("take", [((3, 5), (4,))], ref=lambda a, i, axis, mode: np.take(a, i.astype(int) % 5, axis=1),
         params=dict(axis=1, mode="wrap"), gens=[uniform(), integers(-3, 9)], wrt=(0,), name="take-wrap"),
    Case("Embedding", [((2, 3), (6, 4))], ref=lambda d, w, input_dim, output_dim: w[d.astype(int)],
         params=dict(input_dim=6, output_dim=4), gens=[integers(0, 6), uniform()], wrt=(1,)),
    Case("one_hot", [((2, 3),)], ref=lambda i, depth: np.eye(depth, dtype=np.float32)[i.astype(int)],
         params=dict(depth=4), gens=integers(0, 4), grad="zero"),
    Case("where", [((2, 3), (2, 3), (2, 3)), ((2,), (2, 3), (2, 3))],
         ref=lambda c, x, y: np.where(c.reshape(c.shape + (1,) * (x.ndim - c.ndim)) != 0, x, y),
         gens=[integers(0, 2), uniform(), uniform()], wrt=(1, 2)),
]
