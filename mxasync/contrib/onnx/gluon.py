"""``import_to_gluon``: an ONNX file as a Gluon ``SymbolBlock`` with its parameters loaded."""

from __future__ import annotations

from ... import symbol as sym_mod
from ...gluon import SymbolBlock
from ...onnx.import_model import get_model_metadata, import_model
from ...runtime.context import cpu

__all__ = ["import_to_gluon"]


def import_to_gluon(model_file, ctx=None):
    """The model in ``model_file`` as a :class:`~mxasync.gluon.SymbolBlock` on ``ctx`` (a context or a list).

    Its inputs are the file's data inputs (graph inputs that are not initializers), in order.
    """
    sym, arg_params, aux_params = import_model(model_file)
    names = [t[0] for t in get_model_metadata(model_file)["input_tensor_data"]]
    net = SymbolBlock(outputs=sym, inputs=[sym_mod.var(n) for n in names])
    ctx = cpu() if ctx is None else ctx
    params = net.collect_params()
    for source in (arg_params, aux_params):
        for name, value in source.items():
            if name in params:
                params[name].shape = value.shape
                params[name]._load_init(value, ctx=ctx)
    return net
