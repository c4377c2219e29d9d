"""``mx.sym.contrib``: every ``_contrib_<name>`` op as ``mx.sym.contrib.<name>`` (MXNet's namespace)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..operator.registry import list_ops
from .register import make_function

_name = ""
__all__ = sorted(n[len("_contrib_"):] for n in list_ops(include_aliases=True) if n.startswith("_contrib_"))

for _name in __all__:
    globals()[_name] = make_function("_contrib_" + _name)
del _name

from ._contrib_extra import adamw_update, mp_adamw_update, rand_zipfian  # noqa: E402 - MXNet's Python-level ones
from .control_flow import cond, foreach, while_loop  # noqa: E402

__all__ += ["rand_zipfian", "adamw_update", "mp_adamw_update", "foreach", "while_loop", "cond"]


if TYPE_CHECKING:  # the functions made from the registry above, as type checkers see them
    def __getattr__(name: str) -> Any: ...
