"""``mx.npx`` operators, written once against a frontend ``F``: MXNet's neural-network ops (the
legacy ops of the registry, ``Activation``, ``FullyConnected``, ``Convolution``, ...) taking and
giving NumPy-interface arrays, and ``npx.reshape`` with MXNet's NumPy-interface codes.
"""

from __future__ import annotations

from typing import Any

import numpy as _np

from ..numpy._exports import exporter

FUNCS: dict[str, Any] = {}
_export = exporter(FUNCS)


def _kw(kwargs):
    return {k: v for k, v in kwargs.items() if v is not None and k not in ("out", "name")}


@_export
def _relu(F, data):
    return F.op("relu", [data])


@_export
def _sigmoid(F, data):
    return F.op("sigmoid", [data])


@_export
def _activation(F, data, act_type="relu", **kwargs):
    return F.op("Activation", [data], act_type=act_type)


@_export
def _leaky_relu(F, data, gamma=None, act_type="leaky", slope=0.25, lower_bound=0.125, upper_bound=0.334, **kw):
    ins = [data] + ([gamma] if gamma is not None else [])
    return F.op("LeakyReLU", ins, act_type=act_type, slope=slope, lower_bound=lower_bound, upper_bound=upper_bound)


def _softmax_like(op):
    def f(F, data, length=None, axis=-1, temperature=None, use_length=False, dtype=None, **kw):
        ins = [data] + ([length] if length is not None else [])
        params = {"axis": axis, "use_length": bool(use_length or length is not None)}
        if temperature is not None:
            params["temperature"] = temperature
        if dtype is not None:
            params["dtype"] = _np.dtype(dtype).name
        return F.op(op, ins, **params)
    return f


FUNCS["softmax"] = _softmax_like("softmax")
FUNCS["log_softmax"] = _softmax_like("log_softmax")


@_export
def _fully_connected(F, x, weight, bias=None, num_hidden=None, no_bias=True, flatten=True, **kw):
    ins = [x, weight] + ([bias] if bias is not None and not no_bias else [])
    return F.op("FullyConnected", ins, num_hidden=int(num_hidden if num_hidden is not None else weight.shape[0]),
                no_bias=bias is None or no_bias, flatten=flatten)


def _with_bias(ins, bias, no_bias):
    return ins + ([bias] if bias is not None and not no_bias else [])


@_export
def _convolution(F, data=None, weight=None, bias=None, kernel=None, stride=None, dilate=None, pad=None,
                 num_filter=1, num_group=1, workspace=1024, no_bias=False, cudnn_tune=None, cudnn_off=False,
                 layout=None):
    return F.op("Convolution", _with_bias([data, weight], bias, no_bias),
                **_kw(dict(kernel=kernel, stride=stride, dilate=dilate, pad=pad, num_filter=num_filter,
                           num_group=num_group, no_bias=bias is None or no_bias, layout=layout)))


@_export
def _deconvolution(F, data=None, weight=None, bias=None, kernel=None, stride=None, dilate=None, pad=None, adj=None,
                   target_shape=None, num_filter=1, num_group=1, workspace=512, no_bias=True, cudnn_tune=None,
                   cudnn_off=False, layout=None):
    return F.op("Deconvolution", _with_bias([data, weight], bias, no_bias),
                **_kw(dict(kernel=kernel, stride=stride, dilate=dilate, pad=pad, adj=adj, target_shape=target_shape,
                           num_filter=num_filter, num_group=num_group, no_bias=bias is None or no_bias,
                           layout=layout)))


@_export
def _pooling(F, data=None, kernel=None, stride=None, pad=None, pool_type="max", pooling_convention="valid",
             global_pool=False, cudnn_off=False, p_value=None, count_include_pad=None, layout=None, **kw):
    return F.op("Pooling", [data], **_kw(dict(kernel=kernel, stride=stride, pad=pad, pool_type=pool_type,
                                               pooling_convention=pooling_convention, global_pool=global_pool,
                                               p_value=p_value, count_include_pad=count_include_pad,
                                               layout=layout)))


@_export
def _batch_norm(F, x, gamma, beta, running_mean, running_var, eps=1e-3, momentum=0.9, fix_gamma=True,
                use_global_stats=False, output_mean_var=False, axis=1, cudnn_off=False, **kw):
    return F.op("BatchNorm", [x, gamma, beta, running_mean, running_var], eps=eps, momentum=momentum,
                fix_gamma=fix_gamma, use_global_stats=use_global_stats, output_mean_var=output_mean_var, axis=axis)


@_export
def _layer_norm(F, data=None, gamma=None, beta=None, axis=-1, eps=1e-5, output_mean_var=False):
    return F.op("LayerNorm", [data, gamma, beta], axis=axis, eps=eps, output_mean_var=output_mean_var)


@_export
def _dropout(F, data, p=0.5, mode="training", axes=(), cudnn_off=False, **kw):
    return F.op("Dropout", [data], p=p, mode=mode, axes=tuple(axes))


@_export
def _embedding(F, data, weight, input_dim=None, output_dim=None, dtype="float32", sparse_grad=False, **kw):
    return F.op("Embedding", [data, weight], input_dim=int(input_dim if input_dim is not None else weight.shape[0]),
                output_dim=int(output_dim if output_dim is not None else weight.shape[1]), dtype=_np.dtype(dtype).name)


@_export
def _one_hot(F, data, depth=None, on_value=1.0, off_value=0.0, dtype="float32"):
    return F.op("one_hot", [data], depth=int(depth), on_value=on_value, off_value=off_value,
                dtype=_np.dtype(dtype).name)


@_export
def _pick(F, data, index, axis=-1, mode="clip", keepdims=False):
    return F.op("pick", [data, index], axis=axis, mode=mode, keepdims=keepdims)


@_export
def _topk(F, data, axis=-1, k=1, ret_typ="indices", is_ascend=False, dtype="float32"):
    return F.op("topk", [data], axis=axis, k=k, ret_typ=ret_typ, is_ascend=is_ascend, dtype=_np.dtype(dtype).name)


@_export
def _sequence_mask(F, data, sequence_length=None, use_sequence_length=False, value=0.0, axis=0):
    ins = [data] + ([sequence_length] if sequence_length is not None else [])
    return F.op("SequenceMask", ins, use_sequence_length=bool(use_sequence_length), value=value, axis=axis)


@_export
def _batch_dot(F, a, b, transpose_a=False, transpose_b=False, forward_stype=None):
    return F.op("_npx_batch_dot", [a, b], transpose_a=bool(transpose_a), transpose_b=bool(transpose_b))


@_export
def _gather_nd(F, data, indices):
    return F.op("gather_nd", [data, indices])


@_export
def _arange_like(F, data, start=0.0, step=1.0, repeat=1, ctx=None, axis=None):
    return F.op("_contrib_arange_like", [data], start=start, step=step, repeat=repeat, axis=axis)


@_export
def _batch_flatten(F, data):
    return F.op("Flatten", [data])


@_export
def _cast(F, data, dtype):
    return F.op("_npi_copy", [data], dtype=_np.dtype(dtype).name)


@_export
def _smooth_l1(F, data, scalar=1.0):
    return F.op("smooth_l1", [data], scalar=scalar)


@_export
def _erf(F, data):
    return F.op("erf", [data])


@_export
def _erfinv(F, data):
    return F.op("erfinv", [data])


@_export
def _gamma(F, data):
    return F.op("gamma", [data])


@_export
def _gammaln(F, data):
    return F.op("gammaln", [data])


@_export
def _reshape_like(F, lhs, rhs, lhs_begin=None, lhs_end=None, rhs_begin=None, rhs_end=None):
    return F.op("reshape_like", [lhs, rhs], **_kw(dict(lhs_begin=lhs_begin, lhs_end=lhs_end, rhs_begin=rhs_begin,
                                                       rhs_end=rhs_end)))


@_export
def _shape_array(F, data):
    return F.op("_npx_shape_array", [data])


@_export
def _slice(F, data, begin, end, step=None):
    key = []
    for i, b in enumerate(begin):
        e = end[i] if i < len(end) else None
        s = step[i] if step is not None and i < len(step) else None
        key.append(("s", b, e, s))
    return F.op("_npi_index", [data], key=tuple(key), num_args=1)


@_export
def _reshape(F, a, newshape, reverse=False, order="C"):
    return F.op("_npx_reshape", [a], newshape=tuple(int(s) for s in newshape), reverse=bool(reverse))


@_export
def _nonzero(F, a):
    return F.op("_npx_nonzero", [a])


@_export
def _rnn(F, data=None, parameters=None, state=None, state_cell=None, sequence_length=None, mode=None,
         state_size=None, num_layers=None, bidirectional=False, state_outputs=False, p=0.0, use_sequence_length=False,
         projection_size=None, lstm_state_clip_min=None, lstm_state_clip_max=None, lstm_state_clip_nan=False):
    ins = [data, parameters, state] + ([state_cell] if state_cell is not None else [])
    return F.op("RNN", ins, **_kw(dict(mode=mode, state_size=state_size, num_layers=num_layers,
                                        bidirectional=bidirectional, state_outputs=state_outputs, p=p)))


@_export
def _roi_pooling(F, data, rois, pooled_size, spatial_scale):
    return F.op("ROIPooling", [data, rois], pooled_size=tuple(pooled_size), spatial_scale=spatial_scale)


@_export
def _multibox_prior(F, data, sizes=(1.0,), ratios=(1.0,), clip=False, steps=(-1.0, -1.0), offsets=(0.5, 0.5)):
    return F.op("_contrib_MultiBoxPrior", [data], sizes=tuple(sizes), ratios=tuple(ratios), clip=clip,
                steps=tuple(steps), offsets=tuple(offsets))


@_export
def _multibox_target(F, anchor, label, cls_pred, overlap_threshold=0.5, ignore_label=-1.0,
                     negative_mining_ratio=-1.0, negative_mining_thresh=0.5, minimum_negative_samples=0,
                     variances=(0.1, 0.1, 0.2, 0.2)):
    return F.op("_contrib_MultiBoxTarget", [anchor, label, cls_pred], overlap_threshold=overlap_threshold,
                ignore_label=ignore_label, negative_mining_ratio=negative_mining_ratio,
                negative_mining_thresh=negative_mining_thresh, minimum_negative_samples=minimum_negative_samples,
                variances=tuple(variances))


@_export
def _multibox_detection(F, cls_prob, loc_pred, anchor, clip=True, threshold=0.01, background_id=0,
                        nms_threshold=0.5, force_suppress=False, variances=(0.1, 0.1, 0.2, 0.2), nms_topk=-1):
    return F.op("_contrib_MultiBoxDetection", [cls_prob, loc_pred, anchor], clip=clip, threshold=threshold,
                background_id=background_id, nms_threshold=nms_threshold, force_suppress=force_suppress,
                variances=tuple(variances), nms_topk=nms_topk)


@_export
def _constraint_check(F, input, msg="Constraint violated."):  # noqa: A002 - MXNet's name
    return F.op("_npx_constraint_check", [input], msg=msg)
