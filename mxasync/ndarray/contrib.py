"""``mx.nd.contrib``: every ``_contrib_<name>`` op as ``mx.nd.contrib.<name>`` (MXNet's namespace)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..operator.registry import list_ops
from .register import make_function

_name = ""
__all__ = sorted(n[len("_contrib_"):] for n in list_ops(include_aliases=True) if n.startswith("_contrib_"))

for _name in __all__:
    globals()[_name] = make_function("_contrib_" + _name)
del _name

from ._contrib_extra import isfinite, isinf, isnan, rand_zipfian  # noqa: E402 - MXNet's Python-level ones
from ._contrib_updates import (  # noqa: E402 - MXNet's Python wrappers of the AdamW and fused LAMB ops
    adamw_update,
    mp_adamw_update,
    multi_adamw_update,
    multi_lamb_update,
    multi_mp_adamw_update,
    multi_mp_lamb_update,
)
from .control_flow import cond, foreach, while_loop  # noqa: E402

__all__ += ["isinf", "isfinite", "isnan", "rand_zipfian", "foreach", "while_loop", "cond", "adamw_update",
            "mp_adamw_update", "multi_adamw_update", "multi_mp_adamw_update", "multi_lamb_update",
            "multi_mp_lamb_update"]


if TYPE_CHECKING:  # the functions made from the registry above, as type checkers see them
    def __getattr__(name: str) -> Any: ...
