"""Python operators on symbols: each becomes the op (and automatic name) MXNet 1.9 uses.

``a + b`` is ``elemwise_add`` named ``_plus0``; ``a + 1`` is ``_plus_scalar``
named ``_plusscalar0``; ``-a`` is ``a * -1.0``.

>>> from mxasync import name, symbol as sym
>>> a, b = sym.Variable("a"), sym.Variable("b")
>>> with name.NameManager():
...     (a + b).name, (2 - a).name, (a ** 2).name
('_plus0', '_rminusscalar0', '_powerscalar0')
"""

from __future__ import annotations

from numbers import Number

import numpy as np

__all__ = ["ArithMixin", "maximum", "minimum", "hypot", "power", "pow"]

# python operator: ((op, name hint) with a symbol, (op, hint) with a scalar)
_OPS = {
    "add": (("elemwise_add", "_plus"), ("_plus_scalar", "_plusscalar")),
    "sub": (("elemwise_sub", "_minus"), ("_minus_scalar", "_minusscalar")),
    "rsub": (None, ("_rminus_scalar", "_rminusscalar")),
    "mul": (("elemwise_mul", "_mul"), ("_mul_scalar", "_mulscalar")),
    "div": (("elemwise_div", "_div"), ("_div_scalar", "_divscalar")),
    "rdiv": (None, ("_rdiv_scalar", "_rdivscalar")),
    "mod": (("_mod", "_mod"), ("_mod_scalar", "_modscalar")),
    "rmod": (None, ("_rmod_scalar", "_rmodscalar")),
    "pow": (("_power", "_power"), ("_power_scalar", "_powerscalar")),
    "rpow": (None, ("_rpower_scalar", "_rpower_scalar")),
    "eq": (("_equal", "_equal"), ("_equal_scalar", "_equal_scalar")),
    "ne": (("_not_equal", "_not_equal"), ("_not_equal_scalar", "_not_equal_scalar")),
    "gt": (("_greater", "_greater"), ("_greater_scalar", "_greater_scalar")),
    "ge": (("_greater_equal", "_greater_equal"), ("_greater_equal_scalar", "_greater_equal_scalar")),
    "lt": (("_lesser", "_lesser"), ("_lesser_scalar", "_lesser_scalar")),
    "le": (("_lesser_equal", "_lesser_equal"), ("_lesser_equal_scalar", "_lesser_equal_scalar")),
}


def _apply(kind: str, lhs, rhs):
    from .register import create
    from .symbol import Symbol

    with_sym, with_scalar = _OPS[kind]
    if isinstance(rhs, Symbol) and with_sym is not None:
        return create(with_sym[0], [lhs, rhs], {}, hint=with_sym[1])
    if isinstance(rhs, (Number, np.number)) and not isinstance(rhs, bool):
        return create(with_scalar[0], [lhs], {"scalar": rhs}, hint=with_scalar[1])
    return NotImplemented


class ArithMixin:
    __slots__ = ()

    def __add__(self, o):
        return _apply("add", self, o)

    __radd__ = __add__

    def __sub__(self, o):
        return _apply("sub", self, o)

    def __rsub__(self, o):
        return _apply("rsub", self, o)

    def __mul__(self, o):
        return _apply("mul", self, o)

    __rmul__ = __mul__

    def __truediv__(self, o):
        return _apply("div", self, o)

    def __rtruediv__(self, o):
        return _apply("rdiv", self, o)

    def __mod__(self, o):
        return _apply("mod", self, o)

    def __rmod__(self, o):
        return _apply("rmod", self, o)

    def __pow__(self, o):
        return _apply("pow", self, o)

    def __rpow__(self, o):
        return _apply("rpow", self, o)

    def __neg__(self):
        return _apply("mul", self, -1.0)

    def __abs__(self):
        from .register import create

        return create("abs", [self], {}, hint="abs")

    def __eq__(self, o):
        return _apply("eq", self, o)

    def __ne__(self, o):
        return _apply("ne", self, o)

    def __gt__(self, o):
        return _apply("gt", self, o)

    def __ge__(self, o):
        return _apply("ge", self, o)

    def __lt__(self, o):
        return _apply("lt", self, o)

    def __le__(self, o):
        return _apply("le", self, o)

    __hash__ = object.__hash__


def _binary_fn(sym_op: tuple, scalar_op: tuple, name: str):
    def fn(left, right):
        from .register import create
        from .symbol import Symbol

        if isinstance(left, Symbol) and isinstance(right, Symbol):
            return create(sym_op[0], [left, right], {}, hint=sym_op[1])
        if isinstance(left, Symbol):
            return create(scalar_op[0], [left], {"scalar": right}, hint=scalar_op[1])
        if isinstance(right, Symbol):
            return create(scalar_op[0], [right], {"scalar": left}, hint=scalar_op[1])
        raise TypeError(f"{name}: at least one argument must be a Symbol")

    fn.__name__ = name
    fn.__doc__ = f"Elementwise {name} of symbols and scalars (``mx.sym.{name}``)."
    return fn


maximum = _binary_fn(("_maximum", "_maximum"), ("_maximum_scalar", "_maximumscalar"), "maximum")
minimum = _binary_fn(("_minimum", "_minimum"), ("_minimum_scalar", "_minimumscalar"), "minimum")
hypot = _binary_fn(("_hypot", "_hypot"), ("_hypot_scalar", "_hypotscalar"), "hypot")


def power(base, exp):
    """``base ** exp`` for symbols and scalars (``mx.sym.pow``)."""
    from .symbol import Symbol

    if isinstance(base, Symbol):
        return base ** exp
    if isinstance(exp, Symbol):
        return exp.__rpow__(base)
    raise TypeError("power: at least one argument must be a Symbol")


pow = power  # noqa: A001 - MXNet's name
