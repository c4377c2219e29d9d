"""Checkpoints of models built from RNN cells: weights are saved per gate (unpacked) and packed on load,
so a checkpoint of a FusedRNNCell model loads into its unfused twin and back (MXNet's mx.rnn.rnn)."""

from __future__ import annotations

from ..model import load_checkpoint, save_checkpoint
from .rnn_cell import BaseRNNCell

__all__ = ["save_rnn_checkpoint", "load_rnn_checkpoint", "do_rnn_checkpoint"]


def _as_list(cells):
    return [cells] if isinstance(cells, BaseRNNCell) else list(cells)


def save_rnn_checkpoint(cells, prefix: str, epoch: int, symbol, arg_params: dict, aux_params: dict) -> None:
    """``prefix-symbol.json`` and ``prefix-%04d.params`` with the cells' weights unpacked."""
    for cell in _as_list(cells):
        arg_params = cell.unpack_weights(arg_params)
    save_checkpoint(prefix, epoch, symbol, arg_params, aux_params)


def load_rnn_checkpoint(cells, prefix: str, epoch: int):
    """``(symbol, arg_params, aux_params)`` with the cells' weights packed again."""
    sym, arg, aux = load_checkpoint(prefix, epoch)
    for cell in _as_list(cells):
        arg = cell.pack_weights(arg)
    return sym, arg, aux


def do_rnn_checkpoint(cells, prefix: str, period: int = 1):
    """An epoch-end callback saving an RNN checkpoint every ``period`` epochs."""
    period = max(1, int(period))

    def _callback(iter_no, sym=None, arg=None, aux=None):
        if (iter_no + 1) % period == 0:
            save_rnn_checkpoint(cells, prefix, iter_no + 1, sym, arg, aux)

    return _callback
