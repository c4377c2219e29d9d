"""Automatic mixed precision, MXNet 1.9.1's ``mx.contrib.amp``: training (``init``, ``init_trainer``,
``scale_loss``, ``unscale``) and inference conversion (``convert_symbol``, ``convert_model``,
``convert_hybrid_block``).

>>> import mxasync as mx
>>> from mxasync.contrib import amp
>>> amp.init("bfloat16")
>>> mx.nd.FullyConnected(mx.nd.ones((2, 3)), mx.nd.ones((4, 3)), mx.nd.ones((4,)), num_hidden=4).dtype.__name__
'bfloat16'
>>> amp.deinit()  # mxasync's addition: back to plain float32 calls
"""

from __future__ import annotations

import contextlib
import logging

import numpy as np

from ..._bfloat16 import MXNET_BFLOAT16
from ...context import cpu
from ...gluon.hybrid import HybridBlock, SymbolBlock
from ...gluon.trainer import Trainer
from ...ndarray._dtype_maps import _DTYPE_MX_TO_NP
from ...optimizer import Optimizer
from ...symbol.symbol import Symbol
from . import casting
from .lists import OpLists, lists_module, target_dtype_of
from .loss_scaler import LossScaler
from .reduce_precision import reduce_precision, set_input_dtypes

__all__ = ["init", "deinit", "init_trainer", "scale_loss", "unscale", "convert_model", "convert_hybrid_block",
           "convert_bucketing_module", "list_lp16_ops", "list_fp32_ops", "list_lp16_fp32_ops",
           "list_conditional_fp32_ops", "list_widest_type_cast", "list_loss_output_functions",
           "list_lp16_use_fp32_params", "convert_symbol", "bfloat16", "LossScaler"]

#: how MXNet names bfloat16 here (``amp.bfloat16``); mxasync reads it as the real bfloat16 type
bfloat16 = MXNET_BFLOAT16

#: MXNet's flag that ``init()`` ran; libraries read it (GluonNLP's masks pick -1e4 over -1e18 under AMP)
_amp_initialized = False
_amp_loss_scale_initialized = False
_loss_scaler: LossScaler | None = None


def init(target_dtype="float16", target_precision_ops=None, conditional_fp32_ops=None, fp32_ops=None) -> None:
    """Turn AMP on: from now on op calls (``mx.nd``, ``mx.sym``, ``mx.np``/``mx.npx``, Gluon blocks) cast
    their inputs by the op lists (``list_lp16_ops`` & co, or the overrides given).  A second call does nothing,
    as in MXNet; :func:`deinit` turns it off."""
    global _amp_initialized, _loss_scaler
    if _amp_initialized:
        return
    lists = OpLists.make(target_dtype, target_precision_ops, fp32_ops, conditional_fp32_ops)
    _amp_initialized = True
    logging.info("Using AMP")
    _loss_scaler = LossScaler()
    casting.install(casting.AmpCasts(lists, _loss_scaler))


def deinit() -> None:
    """Undo :func:`init` (mxasync's addition; MXNet has no way back): op calls are left alone again."""
    global _amp_initialized, _amp_loss_scale_initialized, _loss_scaler
    casting.uninstall()
    _amp_initialized = _amp_loss_scale_initialized = False
    _loss_scaler = None


def _check_trainer(optimizer_or_trainer) -> None:
    if isinstance(optimizer_or_trainer, Optimizer):
        raise TypeError("AMP is currently only compatible with Gluon Trainer")
    if not isinstance(optimizer_or_trainer, Trainer):
        raise TypeError("optimizer_or_trainer should be a Gluon Trainer or an optimizer, instead is "
                        f"{type(optimizer_or_trainer)}")


def init_trainer(optimizer_or_trainer) -> None:
    """Give a Gluon Trainer a dynamic loss scaler: its steps are then skipped on overflowing gradients."""
    global _amp_loss_scale_initialized
    assert _amp_initialized, "AMP not initialized, did you forget to call amp.init()?"
    _check_trainer(optimizer_or_trainer)
    if not _amp_loss_scale_initialized:
        _amp_loss_scale_initialized = True
        scaler = _loss_scaler
    else:
        scaler = LossScaler()
    optimizer_or_trainer._amp_loss_scaler = scaler
    optimizer_or_trainer._amp_original_scale = optimizer_or_trainer._scale


@contextlib.contextmanager
def scale_loss(loss, optimizer_or_trainer):
    """``with amp.scale_loss(loss, trainer) as scaled: autograd.backward(scaled)``: the loss times the loss
    scale; the trainer divides the gradients by it again."""
    scaler = getattr(optimizer_or_trainer, "_amp_loss_scaler", None)
    assert scaler is not None, "Loss scaler is not initialized, did you forget to call amp.init_trainer()?"
    optimizer_or_trainer._scale = optimizer_or_trainer._amp_original_scale / scaler.loss_scale
    if isinstance(loss, (list, tuple)):
        yield [x * scaler.loss_scale for x in loss]
    else:
        yield scaler.loss_scale * loss


def unscale(optimizer_or_trainer) -> None:
    """Divide the gradients by the loss scale now (to clip them, say); the trainer's scale becomes 1."""
    _check_trainer(optimizer_or_trainer)
    for param in optimizer_or_trainer._params:
        if param._grad is None:
            continue
        for g in param.list_grad():
            g[:] *= optimizer_or_trainer._scale
    optimizer_or_trainer._scale = 1.0


# -- conversion for inference ------------------------------------------------------------------------
def _check_lists(target, target_ops, fp32_ops, conditional) -> None:
    """MXNet's checks: no op in two lists, and only ops the default lists know."""
    cond_names = [c[0] for c in conditional]
    for a, b, what in ((target_ops, fp32_ops, "target_dtype_ops and fp32_ops"),
                       (target_ops, cond_names, "target_dtype_ops and conditional_fp32_ops"),
                       (cond_names, fp32_ops, "fp32_ops and conditional_fp32_ops")):
        common = set(a) & set(b)
        assert not common, f"Ops cannot be in two or more lists. Common ops in {what} {common}"
    known = set(list_lp16_ops(target) + list_fp32_ops(target) + list_lp16_fp32_ops(target)
                + [c[0] for c in list_conditional_fp32_ops(target)])
    illegal = set(target_ops + fp32_ops + cond_names) - known
    assert not illegal, f"Can only choose ops from the lists list_lp16_ops, list_fp32_ops, list_lp16_fp32_ops " \
                        f"and list_conditional_fp32_ops of the target dtype; op {illegal} is in none of them"


def convert_symbol(sym, target_dtype="float16", target_dtype_ops=None, fp32_ops=None, conditional_fp32_ops=None,
                   excluded_sym_names=None, data_names=None, cast_optional_params=False) -> Symbol:
    """An FP32 graph with ``amp_cast`` / ``amp_multicast`` inserted where MXNet 1.9.1 inserts them, and its
    inputs' ``__dtype__`` attributes set (parameters in the target dtype with ``cast_optional_params``)."""
    assert isinstance(sym, Symbol), "First argument to convert_symbol should be Symbol"
    assert target_dtype in ("float16", "bfloat16"), "Only target_dtype float16 and bfloat16 are supported currently"
    target = target_dtype_of(target_dtype)
    target_ops = list(target_dtype_ops) if target_dtype_ops is not None else list_lp16_ops(target)
    fp32 = list(fp32_ops) if fp32_ops is not None else list_fp32_ops(target)
    conditional = list(conditional_fp32_ops) if conditional_fp32_ops is not None \
        else list_conditional_fp32_ops(target)
    _check_lists(target, target_ops, fp32, conditional)
    excluded = list(excluded_sym_names) if excluded_sym_names is not None else []
    assert isinstance(excluded, list), "excluded_sym_names should be a list of strs"
    attrs = sym.attr_dict()
    inputs = sym.list_inputs()
    if data_names is None:
        data_names = [n for n in inputs if "__dtype__" not in attrs.get(n, {})]
    model_params = set(inputs) - set(data_names)
    lists = OpLists.make(target, target_ops, fp32, conditional)
    out = reduce_precision(sym, lists, set(excluded), set(data_names), bool(cast_optional_params))
    set_input_dtypes(out, list(data_names), model_params, target, bool(cast_optional_params))
    return out


def _dtype_attr(attrs: dict, name: str):
    code = attrs.get(name, {}).get("__dtype__")
    return None if code in (None, "-1") else np.dtype(_DTYPE_MX_TO_NP[int(code)])


def convert_model(sym, arg_params, aux_params, target_dtype="float16", target_dtype_ops=None, fp32_ops=None,
                  conditional_fp32_ops=None, excluded_sym_names=None, cast_optional_params=False):
    """``convert_symbol`` on a checkpoint's symbol, and its params cast to the types the new graph gives them."""
    assert target_dtype in ("float16", "bfloat16"), "Only target_dtype float16 and bfloat16 are supported currently"
    assert isinstance(sym, Symbol), "First argument to convert_model should be Symbol"
    assert isinstance(arg_params, dict), "Second argument to convert_model should be a dict of name to ndarray"
    assert isinstance(aux_params, dict), "Third argument to convert_model should be a dict of name to ndarray"
    data_names = list(set(sym.list_inputs()) - set(arg_params) - set(aux_params))
    sym = convert_symbol(sym, target_dtype, target_dtype_ops, fp32_ops, conditional_fp32_ops, excluded_sym_names,
                         data_names, cast_optional_params)
    attrs = sym.attr_dict()
    for names, params in ((sym.list_arguments(), arg_params), (sym.list_auxiliary_states(), aux_params)):
        for name in names:
            dtype = _dtype_attr(attrs, name)
            if dtype is not None and name in params:
                params[name] = params[name].astype(dtype)
    return sym, arg_params, aux_params


def convert_hybrid_block(block, target_dtype="float16", target_dtype_ops=None, fp32_ops=None,
                         conditional_fp32_ops=None, excluded_sym_names=None, ctx=None, cast_optional_params=False):
    """A SymbolBlock running ``block``'s graph converted by :func:`convert_symbol`, its parameters cast as
    the graph says.  ``block`` must be hybridized and run once.  ``ctx`` defaults to ``cpu()`` here
    (MXNet's default, ``gpu(0)``, is rarely what a CPU run wants)."""
    assert isinstance(block, HybridBlock), "block input should be a HybridBlock"
    if not block._cached_graph:
        raise RuntimeError("Please first call block.hybridize() and then run forward with this block at least "
                           "once before calling export.")
    inputs, sym = block._cached_graph
    converted = convert_symbol(sym, target_dtype, target_dtype_ops, fp32_ops, conditional_fp32_ops,
                               excluded_sym_names, data_names=[i.name for i in inputs],
                               cast_optional_params=cast_optional_params)
    attrs = converted.attr_dict()
    arg_names, aux_names = set(converted.list_arguments()), set(converted.list_auxiliary_states())
    values = {}
    for name, param in block.collect_params().items():
        kind = "arg" if name in arg_names else "aux"
        assert kind == "arg" or name in aux_names, f"convert_hybrid_block: {name} is not an input of the graph"
        value = param._reduce()
        dtype = _dtype_attr(attrs, name)
        values[f"{kind}:{name}"] = value.astype(dtype) if dtype is not None else value
    result = SymbolBlock(converted, inputs)
    for name, param in result.collect_params().items():
        for kind in ("arg", "aux"):
            value = values.get(f"{kind}:{name}")
            if value is not None and np.dtype(param.dtype) != np.dtype(value.dtype):
                param.cast(value.dtype)
    result.collect_params().load_dict(values, ctx=ctx if ctx is not None else cpu())
    return result


def convert_bucketing_module(bucketing_mod, target_dtype="float16", target_dtype_ops=None, fp32_ops=None,
                             conditional_fp32_ops=None, excluded_sym_names=None, cast_optional_params=False):
    """Each bucket's symbol converted by :func:`convert_model`, in a new BucketingModule."""
    from ...module import BucketingModule

    assert isinstance(bucketing_mod, BucketingModule), "module should be instance of bucketing module"
    assert len(bucketing_mod._buckets) > 0, "Bucketing Module should not be empty"
    assert bucketing_mod.params_initialized, \
        "bucketing_mod params should be initialized for mixed precision conversion"
    arg_params, aux_params = bucketing_mod._curr_module._arg_params, bucketing_mod._curr_module._aux_params
    symbols = {}
    for key, mod in bucketing_mod._buckets.items():
        symbols[key], arg_params, aux_params = convert_model(
            mod._symbol, arg_params, aux_params, target_dtype=target_dtype, target_dtype_ops=target_dtype_ops,
            fp32_ops=fp32_ops, conditional_fp32_ops=conditional_fp32_ops, excluded_sym_names=excluded_sym_names,
            cast_optional_params=cast_optional_params)
    return BucketingModule.load_dict(symbols, sym_gen=bucketing_mod._sym_gen, arg_params=arg_params,
                                     aux_params=aux_params, default_bucket_key=bucketing_mod._default_bucket_key,
                                     **bucketing_mod._module_kwargs)


# -- the op lists -------------------------------------------------------------------------------------
def list_lp16_ops(target_dtype) -> list:
    """Ops run in the target dtype (MXNet 1.9.1's FP16_FUNCS / BF16_FUNCS)."""
    mod = lists_module(target_dtype)
    return list(mod.FP16_FUNCS if mod.__name__.endswith("fp16") else mod.BF16_FUNCS)


def list_fp32_ops(target_dtype) -> list:
    """Ops run in float32."""
    return list(lists_module(target_dtype).FP32_FUNCS)


def list_lp16_fp32_ops(target_dtype) -> list:
    """Ops that run in either type, left as they come."""
    mod = lists_module(target_dtype)
    return list(mod.FP16_FP32_FUNCS if mod.__name__.endswith("fp16") else mod.BF16_FP32_FUNCS)


def list_conditional_fp32_ops(target_dtype) -> list:
    """``(op, param, values)``: ops run in float32 when ``param`` is one of ``values``."""
    return list(lists_module(target_dtype).CONDITIONAL_FP32_FUNCS)


def list_widest_type_cast(target_dtype) -> list:
    """Ops whose inputs are cast to the widest of their types."""
    return list(lists_module(target_dtype).WIDEST_TYPE_CASTS)


def list_loss_output_functions(target_dtype) -> list:
    """Loss outputs, whose ``grad_scale`` the loss scale multiplies."""
    return list(lists_module(target_dtype).LOSS_OUTPUT_FUNCTIONS)


def list_lp16_use_fp32_params(target_dtype):
    """bfloat16: ops whose named inputs stay float32 (None for float16, as MXNet)."""
    mod = lists_module(target_dtype)
    return getattr(mod, "BF16_USE_FP32_PARAMS", None)
