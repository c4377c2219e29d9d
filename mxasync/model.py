"""``mx.model``: checkpoints in MXNet's layout, and the record batch-end callbacks receive.

A checkpoint is two files: ``prefix-symbol.json`` (the graph) and
``prefix-%04d.params`` (an ``mx.nd.save`` dict with ``arg:``/``aux:`` keys).
Both are written atomically (a temporary file, then a rename), so a reader
never sees half a checkpoint file; MXNet 1.9 reads ours and we read its.

>>> import os, tempfile, mxasync as mx
>>> from mxasync import model
>>> prefix = os.path.join(tempfile.mkdtemp(), "net")
>>> net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc")
>>> model.save_checkpoint(prefix, 3, net, {"fc_weight": mx.nd.ones((2, 4)), "fc_bias": mx.nd.zeros((2,))}, {})
>>> sorted(os.listdir(os.path.dirname(prefix)))
['net-0003.params', 'net-symbol.json']
>>> sym, args, aux = model.load_checkpoint(prefix, 3)
>>> sym.list_arguments(), args["fc_weight"].shape, aux
(['data', 'fc_weight', 'fc_bias'], (2, 4), {})
"""

from __future__ import annotations

import logging
from typing import Any, NamedTuple

from .atomic import write_file
from .base import MXAsyncError
from .ndarray import NDArray
from .ndarray import load as nd_load
from .ndarray import save as nd_save
from .runtime.context import cpu
from .symbol import load as sym_load

__all__ = ["BatchEndParam", "save_checkpoint", "load_checkpoint", "load_params", "checkpoint_paths", "SKLEARN_INSTALLED"]

#: MXNet's flag for FeedForward's scikit-learn base class; FeedForward is not provided (docs/porting.md)
SKLEARN_INSTALLED = False


class BatchEndParam(NamedTuple):
    """What ``batch_end_callback``\\ s receive: the epoch, the batch number, the metric and ``fit``'s locals."""

    epoch: int
    nbatch: int
    eval_metric: Any
    locals: dict | None = None


def checkpoint_paths(prefix: str, epoch: int) -> tuple[str, str]:
    """``(symbol file, params file)`` for ``prefix`` and ``epoch``.

    >>> checkpoint_paths("out/mlp", 7)
    ('out/mlp-symbol.json', 'out/mlp-0007.params')
    """
    return f"{prefix}-symbol.json", f"{prefix}-{int(epoch):04d}.params"


def save_checkpoint(prefix: str, epoch: int, symbol, arg_params: dict[str, NDArray],
                    aux_params: dict[str, NDArray], remove_amp_cast: bool = True) -> None:
    """Write ``prefix-symbol.json`` (when ``symbol`` is not None) and ``prefix-%04d.params``; logs
    ``Saved checkpoint to "prefix-%04d.params"`` at INFO, as MXNet does."""
    params_path = write_checkpoint(prefix, epoch, symbol, arg_params, aux_params, remove_amp_cast)
    logging.info('Saved checkpoint to "%s"', params_path)


def write_checkpoint(prefix: str, epoch: int, symbol, arg_params: dict[str, NDArray],
                     aux_params: dict[str, NDArray], remove_amp_cast: bool = True) -> str:
    """:func:`save_checkpoint` without the log line (``Module.save_checkpoint`` logs its own); the params path."""
    sym_path, params_path = checkpoint_paths(prefix, epoch)
    if symbol is not None:
        write_file(sym_path, symbol.tojson(remove_amp_cast))
    save_dict = {f"arg:{k}": v.as_in_context(cpu()) for k, v in arg_params.items()}
    save_dict.update({f"aux:{k}": v.as_in_context(cpu()) for k, v in (aux_params or {}).items()})
    nd_save(params_path, save_dict)
    return params_path


def _split_params(loaded: dict, fname: str) -> tuple[dict[str, NDArray], dict[str, NDArray]]:
    if not isinstance(loaded, dict):
        raise MXAsyncError(f"load_params: {fname} holds an unnamed list of arrays, not a checkpoint")
    arg_params, aux_params = {}, {}
    for key, value in loaded.items():
        kind, _, name = key.partition(":")
        if kind == "arg" and name:
            arg_params[name] = value
        elif kind == "aux" and name:
            aux_params[name] = value
        else:
            raise MXAsyncError(f"load_params: key {key!r} in {fname} has neither an 'arg:' nor an 'aux:' prefix")
    return arg_params, aux_params


def load_params(prefix: str, epoch: int) -> tuple[dict[str, NDArray], dict[str, NDArray]]:
    """``(arg_params, aux_params)`` from ``prefix-%04d.params``."""
    fname = checkpoint_paths(prefix, epoch)[1]
    return _split_params(nd_load(fname), fname)


def load_checkpoint(prefix: str, epoch: int):
    """``(symbol, arg_params, aux_params)`` from a checkpoint written by us or by MXNet."""
    symbol = sym_load(checkpoint_paths(prefix, epoch)[0])
    arg_params, aux_params = load_params(prefix, epoch)
    return symbol, arg_params, aux_params
