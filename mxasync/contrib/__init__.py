"""``mx.contrib``: MXNet's contrib namespaces (``ndarray``/``symbol`` are ``mx.nd.contrib``/``mx.sym.contrib``)."""

from ..ndarray import contrib as ndarray
from ..symbol import contrib as symbol
from . import amp, onnx

nd = ndarray
sym = symbol

__all__ = ["ndarray", "symbol", "nd", "sym", "amp", "onnx"]
