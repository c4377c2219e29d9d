"""MXNet's ``numpy_op_signature``: the ``mx.np`` / ``mx.npx`` function behind a built-in op name.

MXNet names its NumPy-interface ops ``_np_<name>`` (public as ``mx.np.<name>``) and
``_npx_<name>`` (``mx.npx.<name>``); ours are ``_npi_*`` / ``_npx_*`` ops of the registry,
wrapped by Python functions.

>>> _get_builtin_op("_np_sum").__name__
'sum'
"""

from __future__ import annotations

from typing import Any

__all__ = ["_get_builtin_op"]


def _get_builtin_op(op_name: str) -> Any:
    """The public function for ``op_name`` (``_np_x`` -> ``mx.np.x``, ``_npx_x`` -> ``mx.npx.x``), or None."""
    if op_name.startswith("_np_"):
        from . import numpy as mod

        return getattr(mod, op_name[len("_np_"):], None)
    if op_name.startswith("_npx_"):
        from . import numpy_extension as mod

        return getattr(mod, op_name[len("_npx_"):], None)
    return None
