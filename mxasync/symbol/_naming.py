"""Automatic names (``fullyconnected0``) and attribute scopes, as ``mx.name`` / ``mx.AttrScope``.

>>> nm = NameManager()
>>> nm.get(None, "fullyconnected"), nm.get(None, "fullyconnected"), nm.get("fc1", "fullyconnected")
('fullyconnected0', 'fullyconnected1', 'fc1')
>>> with Prefix("net_"):
...     NameManager.current().get(None, "conv")
'net_conv0'
"""

from __future__ import annotations

import contextvars

__all__ = ["NameManager", "Prefix", "AttrScope"]

_current_nm: contextvars.ContextVar = contextvars.ContextVar("mxasync_name_manager", default=None)
_current_attr: contextvars.ContextVar = contextvars.ContextVar("mxasync_attr_scope", default=None)


class NameManager:
    """Gives each unnamed op ``<hint><n>`` with one counter per hint; ``with NameManager():`` scopes them."""

    def __init__(self) -> None:
        self._counter: dict[str, int] = {}
        self._token = None

    def get(self, name: str | None, hint: str) -> str:
        if name:
            return name
        n = self._counter.get(hint, 0)
        self._counter[hint] = n + 1
        return f"{hint}{n}"

    @staticmethod
    def current() -> NameManager:
        nm = _current_nm.get()
        if nm is None:
            nm = _DEFAULT
        return nm

    def __enter__(self) -> NameManager:
        self._token = _current_nm.set(self)
        return self

    def __exit__(self, *exc) -> None:
        _current_nm.reset(self._token)


class Prefix(NameManager):
    """A name manager that prefixes every name it gives (also explicit ones, as MXNet does)."""

    def __init__(self, prefix: str) -> None:
        super().__init__()
        self._prefix = prefix

    def get(self, name: str | None, hint: str) -> str:
        return self._prefix + super().get(name, hint)


_DEFAULT = NameManager()


class AttrScope:
    """Attributes given to every symbol created inside ``with AttrScope(ctx_group='dev1'):``.

    Keys are stored hidden (``__ctx_group__``), as MXNet does.
    """

    def __init__(self, **kwargs: str) -> None:
        for v in kwargs.values():
            if not isinstance(v, str):
                raise ValueError("AttrScope: attribute values must be strings")
        self._attr = {k if k.startswith("__") else f"__{k}__": v for k, v in kwargs.items()}
        self._token = None

    def get(self, attr: dict | None) -> dict[str, str]:
        """The scope's attributes updated with ``attr``."""
        out = dict(self._attr)
        if attr:
            out.update(attr)
        return out

    @staticmethod
    def current() -> AttrScope:
        scope = _current_attr.get()
        return scope if scope is not None else _EMPTY_SCOPE

    def __enter__(self) -> AttrScope:
        outer = AttrScope.current()
        merged = AttrScope()
        merged._attr = {**outer._attr, **self._attr}
        self._token = _current_attr.set(merged)
        return self

    def __exit__(self, *exc) -> None:
        _current_attr.reset(self._token)


_EMPTY_SCOPE = AttrScope()
