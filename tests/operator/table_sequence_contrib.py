"""Table rows: sequences (SequenceLast/Reverse, CTCLoss), cumsum, moments, hard_sigmoid, ravel/unravel, im2col/col2im,
Crop, SVMOutput and the contrib ops khatri_rao, all_finite, multi_all_finite, multi_sum_sq, multi_lars, reset_arrays."""

from __future__ import annotations

import numpy as np
from cases import Case, integers, uniform


def _seq_last(x, lengths=None, use_sequence_length=False, axis=0):
    t = x.shape[axis]
    last = np.full(x.shape[1 - axis], t - 1) if lengths is None else np.clip(lengths.astype(int) - 1, 0, t - 1)
    b = np.arange(x.shape[1 - axis])
    return x[last, b] if axis == 0 else x[b, last]


def _seq_reverse(x, lengths=None, use_sequence_length=False, axis=0):
    out = x.copy()
    for b in range(x.shape[1]):
        n = x.shape[0] if lengths is None else int(lengths[b])
        out[:n, b] = x[:n, b][::-1]
    return out


def _moments(x, axes=None, keepdims=False):
    return x.mean(axis=axes, keepdims=keepdims), x.var(axis=axes, keepdims=keepdims)


def _khatri_rao(*mats, num_args):
    return np.vstack([np.kron(mats[0][:, k], _khatri_rao(*mats[1:], num_args=num_args - 1)[:, k])
                      for k in range(mats[0].shape[1])]).T if len(mats) > 1 else mats[0]


def _col2im_ref(cols, output_size, kernel):
    # sum every column back at its window (stride 1, no pad)
    n, ck, _ = cols.shape
    kh, kw = kernel
    c = ck // (kh * kw)
    oh, ow = output_size[0] - kh + 1, output_size[1] - kw + 1
    img = np.zeros((n, c) + tuple(output_size), cols.dtype)
    blocks = cols.reshape(n, c, kh, kw, oh, ow)
    for i in range(kh):
        for j in range(kw):
            img[:, :, i:i + oh, j:j + ow] += blocks[:, :, i, j]
    return img


def _im2col_ref(x, kernel):
    n, c, h, w = x.shape
    kh, kw = kernel
    oh, ow = h - kh + 1, w - kw + 1
    cols = np.empty((n, c, kh, kw, oh, ow), x.dtype)
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = x[:, :, i:i + oh, j:j + ow]
    return cols.reshape(n, c * kh * kw, oh * ow)


def _svm_check(outs, inputs, params):
    np.testing.assert_array_equal(outs[0], inputs[0])


CASES = [
    Case("SequenceLast", [((4, 3, 2),)], ref=_seq_last),
    Case("SequenceLast", [((4, 3, 2), (3,))], ref=_seq_last, params=dict(use_sequence_length=True),
         gens=[uniform(), integers(1, 5)], wrt=(0,), name="SequenceLast-lengths"),
    Case("SequenceLast", [((3, 4, 2), (3,))], ref=_seq_last, params=dict(use_sequence_length=True, axis=1),
         gens=[uniform(), integers(1, 5)], wrt=(0,), name="SequenceLast-axis1"),
    Case("SequenceReverse", [((4, 3, 2),)], ref=_seq_reverse),
    Case("SequenceReverse", [((4, 3), (3,))], ref=_seq_reverse, params=dict(use_sequence_length=True),
         gens=[uniform(), integers(0, 5)], wrt=(0,), name="SequenceReverse-lengths"),
    Case("cumsum", [((2, 3),)], ref=lambda a: np.cumsum(a)),
    Case("cumsum", [((2, 3, 4),)], ref=lambda a, axis: np.cumsum(a, axis=axis), params=dict(axis=1),
         name="cumsum-axis1"),
    Case("moments", [((2, 3, 4),)], ref=_moments, params=dict(axes=(1,))),
    Case("moments", [((2, 3, 4),)], ref=_moments, params=dict(axes=(0, 2), keepdims=True), name="moments-keepdims"),
    Case("hard_sigmoid", [((3, 5),)], ref=lambda x, alpha=0.2, beta=0.5: np.clip(alpha * x + beta, 0, 1),
         gens=uniform(-2.3, 2.3), params=dict(alpha=0.3, beta=0.4)),
    Case("_ravel_multi_index", [((2, 4),)], ref=lambda d, shape: (d[0] * shape[1] + d[1]).astype(d.dtype),
         params=dict(shape=(5, 6)), gens=integers(0, 5), grad="zero"),
    Case("_unravel_index", [((4,),)], ref=lambda d, shape: np.stack(np.unravel_index(d.astype(int), shape))
         .astype(d.dtype), params=dict(shape=(5, 6)), gens=integers(0, 30), grad="zero"),
    Case("im2col", [((2, 3, 4, 5),)], ref=lambda x, kernel: _im2col_ref(x, kernel), params=dict(kernel=(2, 3))),
    Case("col2im", [((2, 12, 4),)], ref=lambda c, output_size, kernel: _col2im_ref(c, output_size, kernel),
         params=dict(output_size=(3, 4), kernel=(2, 3))),
    Case("Crop", [((2, 3, 5, 6),)], ref=lambda x, num_args, h_w, offset: x[:, :, 1:3, 2:6],
         params=dict(num_args=1, h_w=(2, 4), offset=(1, 2))),
    Case("Crop", [((1, 2, 5, 6), (1, 1, 3, 3))], ref=lambda x, like, num_args, center_crop: x[:, :, 1:4, 1:4],
         params=dict(num_args=2, center_crop=True), wrt=(0,), name="Crop-like-center"),
    # a loss layer: its gradient ignores the head gradient, so it is checked against MXNet's fixtures instead
    Case("SVMOutput", [((4, 3), (4,))], check=_svm_check, gens=[uniform(), integers(0, 3)], grad=False),
    Case("khatri_rao", [((2, 3), (4, 3)), ((2, 2), (3, 2), (2, 2))], ref=_khatri_rao,
         params=dict(num_args=2), name="khatri_rao"),
    # CTC: forward values are pinned by MXNet's fixtures; the table checks the gradient numerically
    Case("CTCLoss", [((5, 2, 4), (2, 3))], check=lambda outs, inputs, params: None,
         gens=[uniform(-2, 2), integers(1, 4)], wrt=(0,)),
    Case("GridGenerator", [((2, 6),)], check=lambda outs, inputs, params: None,
         params=dict(transform_type="affine", target_shape=(3, 4))),
    Case("GridGenerator", [((1, 2, 3, 4),)], check=lambda outs, inputs, params: None,
         params=dict(transform_type="warp"), name="GridGenerator-warp"),
    # sample points kept off the pixel lattice, where bilinear interpolation has kinks
    Case("BilinearSampler", [((1, 2, 3, 4), (1, 2, 2, 3))], check=lambda outs, inputs, params: None,
         gens=[uniform(), uniform(-0.93, 0.93)], dtypes=("float64",)),
    Case("SpatialTransformer", [((1, 2, 4, 5), (1, 6))], check=lambda outs, inputs, params: None,
         params=dict(target_shape=(3, 3), transform_type="affine", sampler_type="bilinear"),
         gens=[uniform(), uniform(0.1, 0.35)], dtypes=("float64",)),
    Case("ROIPooling", [((1, 2, 5, 5), (2, 5))], check=lambda outs, inputs, params: None,
         params=dict(pooled_size=(2, 2), spatial_scale=1.0), gens=[uniform(), integers(0, 1)], wrt=(0,),
         dtypes=("float64",)),
    # fused RNN: values and gradients are pinned by MXNet's fixtures (every mode); with no numpy reference
    # here the table runs the forward only: tests/operator/test_rnn_reserve.py checks every mode's gradients
    # against central differences
    Case("RNN", [((3, 2, 2), (135,), (2, 2, 3))], check=lambda outs, inputs, params: None, dtypes=("float64",),
         params=dict(state_size=3, num_layers=2, mode="gru", state_outputs=True)),
    Case("RNN", [((3, 1, 2), (168,), (2, 1, 3), (2, 1, 3))], check=lambda outs, inputs, params: None,
         dtypes=("float64",), params=dict(state_size=3, num_layers=1, bidirectional=True, mode="lstm",
                                          state_outputs=True), name="RNN-lstm-bi"),
    # LSTMP: W_h2r (2x3) per layer and direction, states (L*D, N, P) and cells (L*D, N, H)
    Case("RNN", [((3, 2, 2), (360,), (4, 2, 2), (4, 2, 3))], check=lambda outs, inputs, params: None,
         dtypes=("float64",), params=dict(state_size=3, num_layers=2, bidirectional=True, mode="lstm",
                                          projection_size=2, state_outputs=True), name="RNN-lstmp-bi"),
    # the plain cells, several layers in both directions (backward reads the reserve space of the forward)
    Case("RNN", [((3, 2, 2), (108,), (4, 2, 3))], check=lambda outs, inputs, params: None, dtypes=("float64",),
         params=dict(state_size=3, num_layers=2, bidirectional=True, mode="rnn_tanh", state_outputs=True),
         name="RNN-tanh-bi"),
    Case("RNN", [((3, 2, 2), (45,), (2, 2, 3))], check=lambda outs, inputs, params: None, dtypes=("float64",),
         gens=[uniform(0.1, 1.0), uniform(0.1, 0.6), uniform(0.1, 0.5)],  # away from relu's kink at 0
         params=dict(state_size=3, num_layers=2, mode="rnn_relu", state_outputs=True), name="RNN-relu"),
    Case("RNN", [((4, 2, 2), (84,), (1, 2, 3), (1, 2, 3))], check=lambda outs, inputs, params: None,
         dtypes=("float64",), params=dict(state_size=3, num_layers=1, mode="lstm", state_outputs=True,
                                          lstm_state_clip_min=-0.3, lstm_state_clip_max=0.25), name="RNN-lstm-clip"),
    Case("all_finite", [((2, 3),)], ref=lambda x: np.ones(1, np.float32), grad="zero"),
    Case("multi_all_finite", [((2,), (3,))], ref=lambda a, b, num_arrays: np.ones(1, np.float32),
         params=dict(num_arrays=2), grad="zero"),
    Case("multi_sum_sq", [((3,), (2, 2))], ref=lambda a, b, num_arrays: np.array([(a * a).sum(), (b * b).sum()]),
         params=dict(num_arrays=2), grad="zero"),
]


def _lars_ref(lrs, w, g, wds, eta, eps, rescale_grad=1.0):
    wn, gn = np.sqrt(w.astype(np.float64)), np.sqrt(g.astype(np.float64))
    ratio = np.ones_like(wn)
    ok = (wn > 0) & (gn > 0)
    ratio[ok] = eta * wn[ok] / (gn[ok] * rescale_grad + wds[ok] * wn[ok] + eps)
    return (ratio * lrs).astype(lrs.dtype)


def _no_outputs(outs, inputs, params):
    assert outs == []  # reset_arrays writes its inputs (checked in test_multi_lars.py)


CASES += [
    Case("multi_lars", [((5,),) * 4], ref=_lars_ref, params=dict(eta=0.5, eps=1e-3, rescale_grad=2.0),
         gens=[uniform(0.01, 0.5), uniform(0, 4), uniform(0, 4), uniform(0, 0.1)], grad=False),
    Case("reset_arrays", [((2, 3), (4,))], params=dict(num_arrays=2), check=_no_outputs),
]
