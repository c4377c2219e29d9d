"""``S``: the symbol functions the ONNX importer builds graphs with, by registry name.

``mx.sym`` lists MXNet's public names; ops named with a leading ``_`` (``_zeros``,
``_copy``, ``_plus_scalar``) live in ``mx.sym._internal``, as in MXNet.  The importer
asks for either kind by name through this one namespace.
"""

from __future__ import annotations

from .. import symbol
from ..symbol import _internal

__all__ = ["S"]


class _Ops:
    def __getattr__(self, name: str):
        return getattr(_internal if name.startswith("_") else symbol, name)


S = _Ops()
