"""``mx.name``: automatic symbol names (``NameManager``, ``Prefix``)."""

from .symbol._naming import NameManager, Prefix

__all__ = ["NameManager", "Prefix"]
