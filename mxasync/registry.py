"""Name -> class tables for the pluggable families (initializers, metrics).

>>> table = ClassRegistry("widget")
>>> @table.register
... class Gear: pass
>>> @table.alias("cog")
... class Sprocket: pass
>>> table.find("GEAR") is Gear, table.find("cog") is Sprocket
(True, True)
"""

from __future__ import annotations

__all__ = ["ClassRegistry"]


class ClassRegistry:
    """Classes by lower-cased name; ``find`` raises ``ValueError`` naming the kind and the known names."""

    def __init__(self, kind: str):
        self.kind = kind
        self._classes: dict[str, type] = {}

    def register(self, klass: type) -> type:
        """Register ``klass`` under its lower-cased class name (usable as a decorator)."""
        self._classes[klass.__name__.lower()] = klass
        return klass

    def alias(self, *names: str):
        """A decorator registering a class under extra names."""

        def deco(klass: type) -> type:
            for n in names:
                self._classes[n.lower()] = klass
            return klass

        return deco

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._classes

    def find(self, name: str) -> type:
        klass = self._classes.get(name.lower()) if isinstance(name, str) else None
        if klass is None:
            raise ValueError(f"Cannot find {self.kind} {name!r}; registered: {sorted(self._classes)}")
        return klass
