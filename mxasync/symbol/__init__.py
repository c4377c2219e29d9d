"""``mx.sym``: symbolic graphs, their inference passes, and one function per registered op."""

from . import linalg
from .arith import hypot, maximum, minimum, pow, power
from .naming import AttrScope, NameManager, Prefix
from .register import populate as _populate
from .serialize import load, load_json
from .symbol import Group, Symbol, Variable, var

__all__ = ["Symbol", "Variable", "var", "Group", "load", "load_json", "NameManager", "Prefix", "AttrScope",
           "maximum", "minimum", "hypot", "power", "pow"]

_populate(globals())
