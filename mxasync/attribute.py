"""``mx.attribute``: attributes given to every symbol created in a ``with AttrScope(...):`` block."""

from .symbol._naming import AttrScope

__all__ = ["AttrScope"]
