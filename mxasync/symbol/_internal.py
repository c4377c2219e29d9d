"""``mx.sym._internal``: the registered ops whose names start with ``_`` (MXNet's namespace for them)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..operator.registry import list_ops
from .register import make_function

_name = ""
__all__ = [n for n in list_ops(include_aliases=True) if n.startswith("_")]

for _name in __all__:
    globals()[_name] = make_function(_name)
del _name


if TYPE_CHECKING:  # the functions made from the registry above, as type checkers see them
    def __getattr__(name: str) -> Any: ...
