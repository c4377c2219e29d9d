"""``mx.sym``: symbolic graphs, their inference passes, and one function per registered op.

The op functions are made on first use (``operator/namespace.py``), as in ``mx.nd``.
"""

from .. import _seams
from ..ndarray._fluent import attach as _attach_fluent_methods
from ..operator.namespace import OpNamespace as _OpNamespace
from . import _internal, contrib, image, linalg, random, sparse
from ._arith import hypot, maximum, minimum, pow, power
from ._creation import arange, eye, full, histogram, linspace, ones, zeros
from ._serialize import load, load_json
from .register import make_function as _make_function
from .symbol import Group, Symbol, Variable, var

__all__ = ["Symbol", "Variable", "var", "Group", "load", "load_json",
           "maximum", "minimum", "hypot", "power", "pow", "zeros", "ones", "full", "arange", "linspace", "eye",
           "histogram"]

_ops = _OpNamespace(globals(), _make_function, public=True)
# MXNet's fluent methods on Symbol too (s.sum(axis=1), s.reshape(...), s.astype(...))
_attach_fluent_methods(Symbol, _ops, names={"reshape": "reshape", "astype": "cast"}, special=False)
_seams.symbol_op.install(lambda op_name, *args, **kwargs: _ops.getattr(__name__, op_name)(*args, **kwargs))


def __getattr__(name):
    # mx.sym.np / mx.sym.npx: the NumPy interface's graph builders, loaded on first use
    if name in ("np", "npx"):
        import importlib

        mod = importlib.import_module(f"{__name__}.numpy" if name == "np" else f"{__name__}.numpy_extension")
        globals()[name] = mod
        return mod
    return _ops.getattr(__name__, name)


def __dir__():
    return _ops.dir()
