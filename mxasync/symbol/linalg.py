"""``mx.sym.linalg``: every ``_linalg_<name>`` op as ``mx.sym.linalg.<name>`` (MXNet's namespace)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..operator.registry import list_ops
from .register import make_function

__all__ = sorted(n[len("_linalg_"):] for n in list_ops(include_aliases=True) if n.startswith("_linalg_"))

for _name in __all__:
    globals()[_name] = make_function("_linalg_" + _name)
del _name


if TYPE_CHECKING:  # the functions made from the registry above, as type checkers see them
    def __getattr__(name: str) -> Any: ...
