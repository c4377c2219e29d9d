"""``mx.nd._internal``: every registered op whose name starts with ``_`` (``_crop_assign``,
``_sample_uniform``, ...), as MXNet keeps them out of ``mx.nd``'s public listing.

The functions are made on first use (``operator/namespace.py``), ops registered later (plugins) too;
``_test_*``/``_doc_*`` ops are found but not listed.
"""

from __future__ import annotations

from ..operator.namespace import OpNamespace as _OpNamespace
from .register import make_function

_ops = _OpNamespace(globals(), make_function, "_", strip=False, exclude=("__",),
                    unlisted=("_test_", "_doc_"))
__all__ = sorted(_ops.names())

__getattr__, __dir__ = _ops.module_hooks(__name__)
