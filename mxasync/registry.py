"""Name -> class tables for the pluggable families (initializers, metrics), and MXNet's ``mx.registry``.

``get_register_func`` / ``get_alias_func`` / ``get_create_func`` / ``get_registry`` are
MXNet's public helpers, one table per base class, which libraries use for their own
families (GluonNLP registers its token embeddings with them).

>>> class Shape: pass
>>> register = get_register_func(Shape, "shape"); create = get_create_func(Shape, "shape")
>>> @register
... class Square(Shape):
...     def __init__(self, side=1): self.side = side
>>> create("square", 3).side, create('["square", {"side": 4}]').side, create(shape="Square").side
(3, 4, 1)

>>> table = ClassRegistry("widget")
>>> @table.register
... class Gear: pass
>>> @table.alias("cog")
... class Sprocket: pass
>>> table.find("GEAR") is Gear, table.find("cog") is Sprocket
(True, True)
"""

from __future__ import annotations

import json
import warnings

__all__ = ["ClassRegistry", "get_registry", "get_register_func", "get_alias_func", "get_create_func"]

_TABLES: dict[type, dict[str, type]] = {}


def get_registry(base_class: type) -> dict[str, type]:
    """A copy of the classes registered for ``base_class``, by lower-cased name."""
    return dict(_TABLES.get(base_class, {}))


def get_register_func(base_class: type, nickname: str):
    """``register(klass, name=None)``: add a subclass of ``base_class`` under ``name`` (default: its class name)."""
    table = _TABLES.setdefault(base_class, {})

    def register(klass: type, name: str | None = None) -> type:
        if not (isinstance(klass, type) and issubclass(klass, base_class)):
            raise TypeError(f"Can only register subclass of {base_class.__name__}, got {klass!r}")
        key = (name or klass.__name__).lower()
        if key in table and table[key] is not klass:
            warnings.warn(f"New {nickname} {klass.__module__}.{klass.__name__} registered with name {key} is "
                          f"overriding existing {nickname} {table[key].__module__}.{table[key].__name__}",
                          UserWarning, stacklevel=2)
        table[key] = klass
        return klass

    register.__doc__ = f"Register {nickname} to the {nickname} factory"
    return register


def get_alias_func(base_class: type, nickname: str):
    """``alias(*names)``: a decorator registering a class under more names."""
    register = get_register_func(base_class, nickname)

    def alias(*aliases: str):
        def reg(klass: type) -> type:
            for name in aliases:
                register(klass, name)
            return klass

        return reg

    return alias


def get_create_func(base_class: type, nickname: str):
    """``create(name_or_instance, *args, **kwargs)``: an instance of the class registered under a name.

    The name may also come as the keyword ``nickname``, as a JSON string
    (``'["name", {kwargs}]'`` or ``'{"nickname": "name", ...}'``) or as a dict.
    """
    table = _TABLES.setdefault(base_class, {})

    def create(*args, **kwargs):
        if args:
            name, args = args[0], args[1:]
        else:
            name = kwargs.pop(nickname)
        if isinstance(name, base_class):
            if args or kwargs:
                raise ValueError(f"{nickname} is already an instance; additional arguments are invalid")
            return name
        if isinstance(name, dict):
            return create(**name)
        if not isinstance(name, str):
            raise TypeError(f"{nickname} must be of string type, got {type(name).__name__}")
        if name.startswith("["):
            if args or kwargs:
                raise ValueError("a JSON list spec takes no other arguments")
            name, kwargs = json.loads(name)
            return create(name, **kwargs)
        if name.startswith("{"):
            if args or kwargs:
                raise ValueError("a JSON dict spec takes no other arguments")
            return create(**json.loads(name))
        key = name.lower()
        if key not in table:
            raise ValueError(f"{name} is not registered. Please register with {nickname}.register first; "
                             f"registered: {sorted(table)}")
        return table[key](*args, **kwargs)

    create.__doc__ = f"Create a {nickname} instance from config."
    return create


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
