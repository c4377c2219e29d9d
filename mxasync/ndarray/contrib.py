"""``mx.nd.contrib``: every ``_contrib_<name>`` op as ``mx.nd.contrib.<name>`` (MXNet's namespace).

The functions are made on first use (``operator/namespace.py``): listing them loads nothing.
"""

from __future__ import annotations

from ..operator.namespace import OpNamespace as _OpNamespace
from .register import make_function

_ops = _OpNamespace(globals(), make_function, "_contrib_")
__all__ = sorted(_ops.names())

from ._contrib_functions import isfinite, isinf, isnan, rand_zipfian  # noqa: E402 - MXNet's Python-level ones
from ._contrib_updates import (  # noqa: E402 - MXNet's Python wrappers of the AdamW and fused LAMB ops
    adamw_update,
    mp_adamw_update,
    multi_adamw_update,
    multi_lamb_update,
    multi_mp_adamw_update,
    multi_mp_lamb_update,
)
from ._control_flow import cond, foreach, while_loop  # noqa: E402

__all__ += ["isinf", "isfinite", "isnan", "rand_zipfian", "foreach", "while_loop", "cond", "adamw_update",
            "mp_adamw_update", "multi_adamw_update", "multi_mp_adamw_update", "multi_lamb_update",
            "multi_mp_lamb_update"]

__getattr__, __dir__ = _ops.module_hooks(__name__)
