"""``mx.contrib``: MXNet's contrib namespaces (``ndarray``/``symbol`` are ``mx.nd.contrib``/``mx.sym.contrib``)."""

from ..ndarray import contrib as ndarray
from ..symbol import contrib as symbol
from . import amp, io

nd = ndarray
sym = symbol

__all__ = ["ndarray", "symbol", "nd", "sym", "amp", "io", "onnx", "text", "svrg_optimization", "quantization"]


def __getattr__(name: str):
    # mx.contrib.onnx loads on first use (it brings Gluon's SymbolBlock along)
    if name in ("onnx", "text", "svrg_optimization", "quantization"):  # text: Gluon's data helpers, svrg and quantization: the Module / Gluon
        import importlib

        value = globals()[name] = importlib.import_module(f"{__name__}.{name}")
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
