"""``mx.sym.image``: every ``_image_<name>`` op as ``mx.sym.image.<name>`` (MXNet's namespace).

The functions are made on first use (``operator/namespace.py``): listing them loads nothing.
"""

from __future__ import annotations

from ..operator.namespace import OpNamespace as _OpNamespace
from .register import make_function

_ops = _OpNamespace(globals(), make_function, "_image_")
__all__ = sorted(_ops.names())

__getattr__, __dir__ = _ops.module_hooks(__name__)
