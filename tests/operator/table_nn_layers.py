"""Table rows: nn layers (``mxasync/operator/nn/``): UpSampling, InstanceNorm, L2Normalization, SequenceMask,
SoftmaxActivation."""

from __future__ import annotations

import numpy as np
import reference_nn as ref
from cases import Case, integers, uniform


def _instance_norm(x, g, b, eps=1e-3):
    ax = tuple(range(2, x.ndim))
    xh = (x - x.mean(ax, keepdims=True)) / np.sqrt(x.var(ax, keepdims=True) + eps)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return xh * g.reshape(shape) + b.reshape(shape)


def _l2(x, mode="instance", eps=1e-10):
    ax = {"instance": tuple(range(1, x.ndim)), "channel": (1,), "spatial": tuple(range(2, x.ndim))}[mode]
    return x / np.sqrt((x * x).sum(ax, keepdims=True) + eps)


def _nearest(*xs, scale, sample_type, num_args=1, multi_input_mode="concat"):
    oh, ow = xs[0].shape[2] * scale, xs[0].shape[3] * scale
    ups = [x.repeat(oh // x.shape[2], 2).repeat(ow // x.shape[3], 3) for x in xs]
    return sum(ups) if multi_input_mode == "sum" else np.concatenate(ups, 1)


def _bilinear(x, w, scale, sample_type, num_filter):
    k = 2 * scale - scale % 2
    return ref.deconv(x, w, kernel=(k, k), num_filter=num_filter, stride=(scale, scale),
                      pad=(scale // 2, scale // 2), num_group=num_filter)


def _seq_mask(x, lengths=None, use_sequence_length=False, value=0.0, axis=0):
    out = x.copy()
    if use_sequence_length:
        for b, n in enumerate(lengths.astype(int)):
            idx = (slice(n, None), b) if axis == 0 else (b, slice(n, None))
            out[idx] = value
    return out


CASES = [
    Case("UpSampling", [((1, 2, 2, 3),)], ref=_nearest, params=dict(scale=2, sample_type="nearest")),
    Case("UpSampling", [((2, 1, 2, 2), (2, 2, 4, 4), (2, 1, 1, 2))], ref=_nearest,
         params=dict(scale=2, sample_type="nearest", num_args=3), name="UpSampling-concat"),
    Case("UpSampling", [((1, 2, 1, 2), (1, 2, 3, 6))], ref=_nearest, name="UpSampling-sum",
         params=dict(scale=3, sample_type="nearest", num_args=2, multi_input_mode="sum")),
    Case("UpSampling", [((1, 2, 2, 2), (2, 1, 4, 4))], ref=_bilinear, name="UpSampling-bilinear",
         params=dict(scale=2, sample_type="bilinear", num_filter=2)),
    Case("InstanceNorm", [((2, 3, 4), (3,), (3,)), ((2, 2, 2, 3), (2,), (2,))], ref=_instance_norm,
         gens=[uniform(), uniform(0.5, 1.5), uniform()]),
    *[Case("L2Normalization", [((2, 3, 2, 2),)], ref=_l2, params=dict(mode=m), name=f"L2Normalization-{m}")
      for m in ("instance", "channel", "spatial")],
    Case("L2Normalization", [((3, 4),)], ref=_l2, name="L2Normalization-2d"),
    Case("SequenceMask", [((3, 2, 2),)], ref=_seq_mask),
    Case("SequenceMask", [((4, 3, 2), (3,))], ref=_seq_mask, params=dict(use_sequence_length=True, value=-1.0),
         gens=[uniform(), integers(0, 5)], wrt=(0,), name="SequenceMask-axis0"),
    Case("SequenceMask", [((3, 4), (3,))], ref=_seq_mask, params=dict(use_sequence_length=True, axis=1),
         gens=[uniform(), integers(1, 4)], wrt=(0,), name="SequenceMask-axis1"),
    Case("SoftmaxActivation", [((2, 3),), ((2, 3, 2),)], ref=lambda x: ref.softmax(x, -1)),
    Case("SoftmaxActivation", [((2, 3, 2),)], ref=lambda x, mode: ref.softmax(x, 1), params=dict(mode="channel"),
         name="SoftmaxActivation-channel"),
]
