"""``mx.attribute``: attributes given to every symbol created in a ``with AttrScope(...):`` block."""

from .symbol.naming import AttrScope

__all__ = ["AttrScope"]
