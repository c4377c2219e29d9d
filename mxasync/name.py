"""``mx.name``: automatic symbol names (``NameManager``, ``Prefix``)."""

from .symbol.naming import NameManager, Prefix

__all__ = ["NameManager", "Prefix"]
