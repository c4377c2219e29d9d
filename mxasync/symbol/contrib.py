"""``mx.sym.contrib``: every ``_contrib_<name>`` op as ``mx.sym.contrib.<name>`` (MXNet's namespace).

The functions are made on first use (``operator/namespace.py``): listing them loads nothing.
"""

from __future__ import annotations

from ..operator.namespace import OpNamespace as _OpNamespace
from .register import make_function

_ops = _OpNamespace(globals(), make_function, "_contrib_")
__all__ = sorted(_ops.names())

from ._contrib_functions import adamw_update, mp_adamw_update, rand_zipfian  # noqa: E402 - MXNet's Python-level ones
from ._control_flow import cond, foreach, while_loop  # noqa: E402

__all__ += ["rand_zipfian", "adamw_update", "mp_adamw_update", "foreach", "while_loop", "cond"]

__getattr__, __dir__ = _ops.module_hooks(__name__)
