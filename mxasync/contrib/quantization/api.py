"""``mx.contrib.quantization``'s user functions, as MXNet 1.9.1's (``python/mxnet/contrib/quantization.py``).

The flow for CPU, as MXNet's MKLDNN build: fuse (:mod:`.fuse`), quantize (:mod:`.passes`), collect
the float layers' outputs on calibration data (:mod:`.calibration`), write the thresholds, fuse
the requantize / dequantize steps into the fused ops.  The result has MXNet's node names, ops and
attributes, so a graph quantized here runs like one quantized by MXNet (and loads in MXNet).
"""

from __future__ import annotations

import logging
import os
import tempfile

from ... import ndarray
from ...context import Context, cpu
from ...gluon import SymbolBlock
from ...io import DataBatch, DataDesc, DataIter
from ...model import load_checkpoint
from ...symbol import Group, var
from ...symbol import load as sym_load
from .calibration import LayerHistogramCollector, LayerOutputMinMaxCollector, optimal_thresholds
from .fuse import fuse_mkldnn
from .passes import post_quantize, quantize_symbol, set_calib_table

__all__ = ["quantize_model", "quantize_model_mkldnn", "quantize_graph", "calib_graph", "quantize_net",
           "quantize_net_v2", "quantize_params"]

_DTYPES = ("int8", "uint8", "auto")


def quantize_params(qsym, params: dict, th_dict: dict) -> dict:
    """MXNet's ``_quantize_params``: ``*_quantize`` weights / biases quantized to int8 with their
    ranges, the other arguments copied, and ``*_min`` / ``*_max`` inputs from the thresholds."""
    out = {}
    for name in qsym.list_arguments():
        if name.endswith(("weight_quantize", "bias_quantize")):
            param = params[name[:-len("_quantize")]]
            val, vmin, vmax = ndarray.contrib.quantize(param, ndarray.min(param), ndarray.max(param), out_type="int8")
            out[name], out[name + "_min"], out[name + "_max"] = val, vmin, vmax
        elif name in params:
            out[name] = params[name]
        elif name.endswith(("_min", "_max")) and name[:-4] in th_dict:
            out[name] = ndarray.array([th_dict[name[:-4]][0 if name.endswith("_min") else 1]])
    return out


def _check_args(excluded_sym_names, excluded_op_names, quantized_dtype, quantize_granularity="tensor-wise"):
    for what, value in (("excluded_sym_names", excluded_sym_names), ("excluded_op_names", excluded_op_names)):
        if value is not None and not isinstance(value, list):
            raise ValueError(f"{what} must be a list of strings, while received type {type(value)}")
    if quantized_dtype not in _DTYPES:
        raise ValueError(f"unknown quantized_dtype {quantized_dtype} received, expected `int8`, `uint8` or `auto`")
    if quantize_granularity not in ("tensor-wise", "channel-wise"):
        raise ValueError(f"unknown quantize_granularity {quantize_granularity} received, "
                         "expected `tensor-wise` or `channel-wise`.")


def _make_collector(calib_mode, quantized_dtype, calib_layer, logger, custom=None):
    if calib_mode == "entropy":
        return LayerHistogramCollector(include_layer=calib_layer, logger=logger)
    if calib_mode == "naive":
        return LayerOutputMinMaxCollector(quantized_dtype, include_layer=calib_layer, logger=logger)
    if calib_mode == "customize" and custom is not None:
        return custom
    raise ValueError(f"unknown calibration mode {calib_mode} received, expected `none`, `naive`, `entropy` "
                     "or `customize`")


def _thresholds(collector, calib_mode, quantized_dtype, logger):
    if calib_mode == "entropy":
        return optimal_thresholds(collector.hist_dict, quantized_dtype, logger=logger)
    return dict(collector.min_max_dict)


def collect_layer_statistics(sym, arg_params, aux_params, data, collector, data_names=("data",),
                             max_num_examples=None, ctx=None, logger=None) -> int:
    """Run the float graph on ``data`` (a DataIter) and hand each watched layer output to
    ``collector.collect(name, array)``; returns the number of examples seen."""
    internals = sym.get_internals()
    outputs = internals.list_outputs()
    names = [n for n in (collector.include_layer or outputs) if n in outputs]
    group = Group([internals[n] for n in names])
    shapes = {d.name: d.shape for d in data.provide_data}
    exe = group.simple_bind(ctx or cpu(), grad_req="null", **shapes)
    exe.copy_params_from(arg_params, aux_params, allow_extra_params=True)
    seen = 0
    data.reset()
    for batch in data:
        feed = {name: arr for name, arr in zip(data_names, batch.data, strict=False)}
        outs = exe.forward(is_train=False, **feed)
        for name, out in zip(names, outs, strict=True):
            collector.collect(name, out)
        seen += data.batch_size
        if max_num_examples is not None and seen >= max_num_examples:
            break
    if logger:
        logger.info("Collected statistics from %d examples", seen)
    return seen


def quantize_graph(sym, arg_params, aux_params, ctx=cpu(), excluded_sym_names=None, excluded_op_names=None,
                   calib_mode="entropy", quantized_dtype="int8", quantize_mode="full",
                   quantize_granularity="tensor-wise", LayerOutputCollector=None, logger=None):
    """(quantized symbol, quantized arg params, aux params, collector) with no calibration yet."""
    _check_args(excluded_sym_names, excluded_op_names, quantized_dtype, quantize_granularity)
    if not isinstance(ctx, Context):
        raise ValueError(f"currently only supports single ctx, while received {ctx}")
    qsym, calib_layer = quantize_symbol(sym, excluded_sym_names or [], excluded_op_names or [],
                                        list(arg_params), quantized_dtype, quantize_granularity)
    collector = None
    if calib_mode is not None and calib_mode != "none":
        collector = _make_collector(calib_mode, quantized_dtype, calib_layer, logger, LayerOutputCollector)
    return qsym, quantize_params(qsym, arg_params, {}), aux_params, collector


def calib_graph(qsym, arg_params, aux_params, collector, calib_mode="entropy", quantized_dtype="int8",
                logger=logging):
    """Write the thresholds a filled collector gives into ``qsym``: (symbol, arg params, aux params)."""
    if calib_mode is None or calib_mode == "none":
        raise ValueError("please set calibration mode to naive or entropy.")
    th_dict = _thresholds(collector, calib_mode, quantized_dtype, logger)
    qsym = set_calib_table(qsym, th_dict)
    return qsym, quantize_params(qsym, arg_params, th_dict), aux_params


def quantize_model(sym, arg_params, aux_params, data_names=("data",), label_names=("softmax_label",),
                   ctx=cpu(), excluded_sym_names=None, excluded_op_names=None, calib_mode="entropy",
                   calib_data=None, num_calib_examples=None, quantized_dtype="int8", quantize_mode="smart",
                   quantize_granularity="tensor-wise", logger=None):
    """MXNet's ``quantize_model``: (quantized symbol, arg params, aux params), calibrated on ``calib_data``."""
    if isinstance(sym, str):
        sym = sym_load(sym)
    qsym, _, aux_params, collector = quantize_graph(
        sym, arg_params, aux_params, ctx, excluded_sym_names, excluded_op_names, calib_mode, quantized_dtype,
        quantize_mode, quantize_granularity, logger=logger)
    if collector is None:
        return qsym, quantize_params(qsym, arg_params, {}), aux_params
    if calib_data is None:
        raise ValueError(f"calib_data must be provided when calib_mode={calib_mode}")
    if not isinstance(calib_data, DataIter):
        raise ValueError(f"calib_data must be of DataIter type when calib_mode={calib_mode}, "
                         f"while received type {type(calib_data)}")
    collect_layer_statistics(sym, arg_params, aux_params, calib_data, collector, data_names,
                             num_calib_examples, ctx, logger)
    return calib_graph(qsym, arg_params, aux_params, collector, calib_mode, quantized_dtype, logger)


def quantize_model_mkldnn(sym, arg_params, aux_params, data_names=("data",), label_names=("softmax_label",),
                          ctx=cpu(), excluded_sym_names=None, excluded_op_names=None, calib_mode="entropy",
                          calib_data=None, num_calib_examples=None, quantized_dtype="int8", quantize_mode="smart",
                          quantize_granularity="tensor-wise", logger=None):
    """``quantize_model`` on the MKLDNN-fused graph, then the post-quantize fusion (MXNet's CPU flow)."""
    if not isinstance(ctx, Context) or ctx.device_type != "cpu":
        raise ValueError("quantize_model_mkldnn only support Intel cpu platform with MKL-DNN Backend")
    fused = fuse_mkldnn(sym)
    qsym, qargs, aux = quantize_model(fused, arg_params, aux_params, data_names, label_names, ctx,
                                      excluded_sym_names, excluded_op_names, calib_mode, calib_data,
                                      num_calib_examples, quantized_dtype, quantize_mode, quantize_granularity,
                                      logger)
    return post_quantize(qsym), qargs, aux


class _DataIterWrapper(DataIter):
    """A DataLoader (or any iterable of batches) as a DataIter; the first array of a batch is ``data``."""

    def __init__(self, calib_data):
        super().__init__()
        self._data = calib_data
        first = next(iter(calib_data))
        first = list(first) if isinstance(first, (list, tuple)) else [first]
        self.provide_data = [DataDesc("data", first[0].shape)]
        self.batch_size = first[0].shape[0]
        self.reset()

    def reset(self):
        self._iter = iter(self._data)

    def next(self):
        batch = next(self._iter)
        batch = list(batch) if isinstance(batch, (list, tuple)) else [batch]
        return DataBatch(data=batch[:1])


def quantize_net_v2(network, quantized_dtype="auto", quantize_mode="full", quantize_granularity="tensor-wise",
                    exclude_layers=None, exclude_layers_match=None, exclude_operators=None, calib_data=None,
                    data_shapes=None, calib_mode="none", num_calib_examples=None, ctx=cpu(),
                    LayerOutputCollector=None, logger=None):
    """A quantized ``SymbolBlock`` from a Gluon HybridBlock (MXNet's ``quantize_net_v2``)."""
    network.hybridize()
    if calib_data is not None and not isinstance(calib_data, DataIter):
        calib_data = _DataIterWrapper(calib_data)
    if calib_data is not None and not data_shapes:
        data_shapes = calib_data.provide_data
    if not data_shapes:
        raise ValueError("data_shapes required")
    data_shapes = [d if isinstance(d, DataDesc) else DataDesc(*d) for d in data_shapes]
    network(*[ndarray.zeros(d.shape) for d in data_shapes])
    with tempfile.TemporaryDirectory() as tmp:
        network.export(os.path.join(tmp, "tmp"), epoch=0)
        symnet, args, auxs = load_checkpoint(os.path.join(tmp, "tmp"), 0)
    exclude_layers = list(exclude_layers or [])
    for match in exclude_layers_match or []:
        exclude_layers += [n for n in symnet.get_internals().list_outputs() if match in n]
    if ctx.device_type == "cpu":
        symnet = fuse_mkldnn(symnet)
    qsym, qargs, auxs, collector = quantize_graph(
        symnet, args, auxs, ctx, exclude_layers, list(exclude_operators or []), calib_mode, quantized_dtype,
        quantize_mode, quantize_granularity, LayerOutputCollector, logger)
    data_names = [d.name for d in data_shapes]
    if collector is not None:
        if calib_data is None:
            raise ValueError(f"calib_data must be provided when calib_mode={calib_mode}")
        collect_layer_statistics(symnet, args, auxs, calib_data, collector, data_names, num_calib_examples,
                                 ctx, logger)
        qsym, qargs, auxs = calib_graph(qsym, args, auxs, collector, calib_mode, quantized_dtype, logger)
    if ctx.device_type == "cpu":
        qsym = post_quantize(qsym)
    net = SymbolBlock(qsym, [var(n) for n in data_names])
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "net-quantized-0000.params")
        save = {f"arg:{k}": v.as_in_context(cpu()) for k, v in qargs.items()}
        save.update({f"aux:{k}": v.as_in_context(cpu()) for k, v in auxs.items()})
        ndarray.save(path, save)
        net.collect_params().load(path, cast_dtype=True, dtype_source="saved")
        net.collect_params().reset_ctx(ctx)
    return net


def quantize_net(network, quantized_dtype="auto", quantize_mode="full", exclude_layers=None,
                 exclude_layers_match=None, exclude_operators=None, calib_data=None, data_shapes=None,
                 calib_mode="none", num_calib_examples=None, ctx=cpu(), logger=None):
    """``quantize_net_v2`` with tensor-wise granularity (MXNet marks it for deprecation)."""
    return quantize_net_v2(network, quantized_dtype, quantize_mode, "tensor-wise", exclude_layers,
                           exclude_layers_match, exclude_operators, calib_data, data_shapes, calib_mode,
                           num_calib_examples, ctx, None, logger)
