"""Table rows: LayerNorm and GroupNorm (per-sample normalisation, ``mxasync/operator/nn_layer_norm.py``)."""

from __future__ import annotations

import numpy as np
from cases import Case, uniform


def _layer_norm(x, g, b, axis=-1, eps=1e-5, output_mean_var=False):
    mean = x.mean(axis, keepdims=True)
    std = np.sqrt(x.var(axis, keepdims=True) + eps)
    shape = [1] * x.ndim
    shape[axis] = -1
    out = (x - mean) / std * g.reshape(shape) + b.reshape(shape)
    return (out, mean, std) if output_mean_var else out


def _group_norm(x, g, b, num_groups=1, eps=1e-5, output_mean_var=False):
    xg = x.reshape(x.shape[0], num_groups, -1)
    mean = xg.mean(-1, keepdims=True)
    std = np.sqrt(xg.var(-1, keepdims=True) + eps)
    out = ((xg - mean) / std * g.reshape(1, -1, 1) + b.reshape(1, -1, 1)).reshape(x.shape)
    return (out, mean[..., 0], std[..., 0]) if output_mean_var else out


# mean and std carry no gradient (MXNet): the output_mean_var rows check values only; the fixtures check that
_GENS = [uniform(), uniform(0.5, 1.5), uniform()]

CASES = [
    Case("LayerNorm", [((3, 5), (5,), (5,)), ((2, 3, 4), (4,), (4,))], ref=_layer_norm, gens=_GENS),
    Case("LayerNorm", [((2, 3, 4), (3,), (3,)), ((2, 3, 2, 2), (3,), (3,))], ref=_layer_norm, gens=_GENS,
         params=dict(axis=1, eps=1e-3), name="LayerNorm-axis1"),
    Case("LayerNorm", [((2, 4, 3), (2,), (2,))], ref=_layer_norm, gens=_GENS,
         params=dict(axis=0, output_mean_var=True), grad=False, name="LayerNorm-mean-var"),
    Case("GroupNorm", [((2, 4, 3), (1,), (1,))], ref=_group_norm, gens=_GENS),
    Case("GroupNorm", [((2, 4, 3), (2,), (2,))], ref=_group_norm, gens=_GENS, params=dict(num_groups=2),
         name="GroupNorm-2"),
    Case("GroupNorm", [((2, 6, 2, 2), (3,), (3,))], ref=_group_norm, gens=_GENS, params=dict(num_groups=3),
         name="GroupNorm-4d"),
    Case("GroupNorm", [((3, 4, 2), (4,), (4,))], ref=_group_norm, gens=_GENS,
         params=dict(num_groups=4, eps=1e-3, output_mean_var=True), grad=False, name="GroupNorm-mean-var"),
]
