"""Regenerate the MXNet 1.9.1 reference fixtures of ``tests/operator/test_sequence_contrib_ops.py``. By hand only:

    $MXASYNC_MXNET_PYTHON tests/operator/fixtures_sequence_contrib/make_fixtures.py

Each case runs one op under ``mx.autograd`` with a fixed head gradient and stores the inputs
``in0``..., outputs ``out0``..., heads ``head0``... and the gradients ``grad0``... of the inputs
named in ``<case>/spec`` (a JSON string with the op as mxasync spells it and its params).
"""

from __future__ import annotations

import json
from pathlib import Path

import mxnet as mx
import numpy as np

HERE = Path(__file__).resolve().parent
rng = np.random.default_rng(20261123)
store: dict[str, np.ndarray] = {}
nd = mx.nd


def rand(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def record(case, op, fn, inputs, params, grads=(0,), loss_layer=False):
    xs = [mx.nd.array(x, dtype=x.dtype) for x in inputs]
    for i in grads:
        xs[i].attach_grad()
    with mx.autograd.record():
        out = fn(*xs, **params)
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
    spec = dict(op=op, params={k: v for k, v in params.items()}, grads=list(grads))
    store[f"{case}/spec"] = np.array(json.dumps(spec))


lengths3 = np.array([1, 4, 2], np.float32)
# MXNet 1.9.1's SequenceLast backward without lengths writes the wrong steps and corrupts its heap: forward only
record("seqlast", "SequenceLast", nd.SequenceLast, [rand(4, 3, 2)], {}, grads=())
record("seqlast_len", "SequenceLast", nd.SequenceLast, [rand(4, 3, 2), lengths3], dict(use_sequence_length=True))
# MXNet 1.9.1's backward of SequenceLast with axis=1 crashes the process: forward only
record("seqlast_axis1", "SequenceLast", nd.SequenceLast, [rand(3, 4, 2), lengths3[[0, 1, 2]]],
       dict(use_sequence_length=True, axis=1), grads=())
record("seqrev", "SequenceReverse", nd.SequenceReverse, [rand(4, 3, 2)], {})
record("seqrev_len", "SequenceReverse", nd.SequenceReverse, [rand(4, 3, 2), lengths3], dict(use_sequence_length=True))
record("cumsum_flat", "cumsum", nd.cumsum, [rand(2, 3)], {})
record("cumsum_axis", "cumsum", nd.cumsum, [rand(2, 3, 4)], dict(axis=1))
record("moments_1", "moments", nd.moments, [rand(2, 3, 4)], dict(axes=(1,)))
record("moments_02_keep", "moments", nd.moments, [rand(2, 3, 4)], dict(axes=(0, 2), keepdims=True))
record("hard_sigmoid", "hard_sigmoid", nd.hard_sigmoid, [rand(3, 5) * 4], {})
record("hard_sigmoid_ab", "hard_sigmoid", nd.hard_sigmoid, [rand(3, 5) * 2], dict(alpha=0.4, beta=0.3))
record("khatri_rao", "khatri_rao", nd.khatri_rao, [rand(2, 3), rand(4, 3)], dict(), grads=())
record("khatri_rao3", "khatri_rao", nd.khatri_rao, [rand(2, 2), rand(3, 2), rand(2, 2)], dict(), grads=())
record("im2col", "im2col", nd.im2col, [rand(2, 3, 5, 6)], dict(kernel=(2, 3), stride=(1, 2), pad=(1, 0)))
record("im2col_dilate", "im2col", nd.im2col, [rand(1, 2, 6, 6)], dict(kernel=(3, 3), dilate=(2, 2)))
record("col2im", "col2im", nd.col2im, [rand(2, 12, 12)], dict(output_size=(5, 6), kernel=(2, 3), stride=(1, 2),
                                                               pad=(1, 0)))
record("crop_hw", "Crop", nd.Crop, [rand(2, 3, 5, 6)], dict(num_args=1, h_w=(2, 4), offset=(1, 2)))
record("crop_like_center", "Crop", nd.Crop, [rand(2, 3, 5, 6), rand(2, 3, 3, 3)],
       dict(num_args=2, center_crop=True))
labels = np.array([2, 0, 1, 2], np.float32)
scores = rand(4, 3)
record("svm_l2", "SVMOutput", nd.SVMOutput, [scores, labels], {})
record("svm_l1", "SVMOutput", nd.SVMOutput, [scores, labels], dict(use_linear=True, margin=0.5,
                                                                    regularization_coefficient=2.0))
ravel_in = np.array([[3, 6, 6], [4, 5, 1]], np.float32)
record("ravel", "ravel_multi_index", nd.ravel_multi_index, [ravel_in], dict(shape=(7, 6)), grads=())
record("unravel", "unravel_index", nd.unravel_index, [np.array([22, 41, 37, 0], np.float32)], dict(shape=(7, 6)),
       grads=())
record("all_finite_inf", "all_finite", nd.all_finite, [np.array([1, np.inf, 2], np.float32)], {}, grads=())
record("all_finite_ok", "all_finite", nd.all_finite, [rand(2, 3)], {}, grads=())
record("multi_all_finite", "multi_all_finite", nd.multi_all_finite, [rand(2), np.array([np.nan], np.float32)],
       dict(num_arrays=2), grads=())
record("multi_sum_sq", "multi_sum_sq", nd.multi_sum_sq, [rand(3), rand(2, 2), rand(5)], dict(num_arrays=3),
       grads=())

# CTC: padded labels (0 with blank 'first', -1 with 'last'), explicit lengths, a repeated symbol (needs a blank)
ctc_data = rand(6, 3, 4)
record("ctc_first", "CTCLoss", nd.ctc_loss, [ctc_data, np.array([[1, 2, 0], [3, 3, 1], [2, 0, 0]], np.float32)], {})
record("ctc_last", "CTCLoss", nd.ctc_loss, [ctc_data, np.array([[0, 1, -1], [2, 2, 0], [1, -1, -1]], np.float32)],
       dict(blank_label="last"))
record("ctc_lengths", "CTCLoss", nd.ctc_loss,
       [ctc_data, np.array([[1, 2, 1], [3, 3, 1], [2, 1, 3]], np.float32), np.array([6, 4, 5], np.float32),
        np.array([2, 3, 1], np.float32)], dict(use_data_lengths=True, use_label_lengths=True))

# spatial transformers: affine and warp grids, sampling with points outside the image, the fused op
theta = np.array([[0.9, 0.2, 0.1, -0.1, 1.1, 0.05], [1.2, -0.3, -0.2, 0.25, 0.8, 0.1]], np.float32)
record("grid_affine", "GridGenerator", nd.GridGenerator, [theta], dict(transform_type="affine", target_shape=(3, 4)))
record("grid_warp", "GridGenerator", nd.GridGenerator, [rand(2, 2, 3, 4)], dict(transform_type="warp"))
record("bilinear", "BilinearSampler", nd.BilinearSampler, [rand(2, 3, 4, 5), rand(2, 2, 3, 3) * 0.8], {},
       grads=(0, 1))
record("spatial_transformer", "SpatialTransformer", nd.SpatialTransformer, [rand(2, 3, 5, 6), theta],
       dict(target_shape=(4, 3), transform_type="affine", sampler_type="bilinear"), grads=(0, 1))
# ROI pooling: a scale, a region past the border, one outside the batch (zeros)
roi_data = rand(2, 3, 6, 7)
rois = np.array([[0, 0, 0, 12, 10], [1, 2, 4, 9, 13], [1, 6, 6, 20, 20], [0, 3, 1, 5, 2]], np.float32)
record("roi_pooling", "ROIPooling", nd.ROIPooling, [roi_data, rois], dict(pooled_size=(2, 3), spatial_scale=0.5))

# fused RNN: every mode, two layers, bidirectional, the final states as outputs; gradients of all inputs
def rnn_size(mode, inputs, hidden, layers, dirs):
    g = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}[mode]
    return sum(dirs * (g * hidden * ((inputs if i == 0 else dirs * hidden) + hidden) + 2 * g * hidden)
               for i in range(layers))


for mode in ("rnn_relu", "rnn_tanh", "lstm", "gru"):
    for layers, bidir in ((1, False), (2, True)):
        dirs = 2 if bidir else 1
        ins = [rand(4, 2, 3), rand(rnn_size(mode, 3, 5, layers, dirs)) * 0.4, rand(layers * dirs, 2, 5) * 0.5]
        if mode == "lstm":
            ins.append(rand(layers * dirs, 2, 5) * 0.5)
        params = dict(state_size=5, num_layers=layers, bidirectional=bidir, mode=mode, state_outputs=True)
        record(f"rnn_{mode}_{layers}{'_bi' if bidir else ''}", "RNN", nd.RNN, ins, params,
               grads=tuple(range(len(ins))))

np.savez_compressed(HERE / "mxnet_ref.npz", **store)
print(f"wrote {len(store)} arrays to {HERE / 'mxnet_ref.npz'}")
