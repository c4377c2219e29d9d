"""Python's operators for the NumPy interface's arrays and symbols, from one table.

``mx.np.ndarray`` and ``mx.sym.np._Symbol`` both turn ``a + b`` into the NumPy function of the
same meaning (``add``) through their own ``_bin(other, name, reverse)``; this table says which
dunder is which function, so the two classes do not each spell out the same thirty methods.
"""

from __future__ import annotations

__all__ = ["ARITHMETIC", "COMPARISONS", "install"]

#: dunder stem -> NumPy function; each also gets its reflected form (``__radd__``)
ARITHMETIC = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide", "mod": "mod",
              "floordiv": "floor_divide", "pow": "power", "matmul": "matmul"}
#: dunder stem -> NumPy function, no reflected form
COMPARISONS = {"gt": "greater", "ge": "greater_equal", "lt": "less", "le": "less_equal"}


def _forward(fn: str):
    def op(self, o):
        return self._bin(o, fn)
    return op


def _reflected(fn: str):
    def op(self, o):
        return self._bin(o, fn, True)
    return op


def install(cls, forward: dict[str, str], reflected: dict[str, str] | None = None) -> None:
    """Give ``cls`` ``__stem__`` for each of ``forward`` and ``__rstem__`` for each of ``reflected``
    (all calling ``self._bin``), unless ``cls`` defines that method itself."""
    for table, make, fmt in ((forward, _forward, "__{}__"), (reflected or {}, _reflected, "__r{}__")):
        for stem, fn in table.items():
            name = fmt.format(stem)
            if name not in cls.__dict__:
                op = make(fn)
                op.__name__ = op.__qualname__ = name
                setattr(cls, name, op)
