"""The generated functions of a front-end module (``mx.nd``, ``mx.sym.contrib``, ...), made on first use.

A module that shows one function per op (``mx.nd.relu``, ``mx.nd.contrib.box_nms``) holds an
:class:`OpNamespace` and answers ``__getattr__`` and ``__dir__`` through it: listing its names
loads nothing, and looking one up makes its function (loading the op's family, see
``registry.get_op``) and stores it in the module, so the next look-up is a plain attribute.

>>> ns = {}
>>> ops = OpNamespace(ns, lambda op: f"<function {op}>", prefix="_contrib_")
>>> "box_nms" in ops.names(), ops.get("box_nms"), ns["box_nms"]
(True, '<function _contrib_box_nms>', '<function _contrib_box_nms>')
>>> ops.get("no_such_op") is None
True
>>> pdfs = OpNamespace({}, str, prefix="_random_pdf_", shown_as="pdf_")
>>> "pdf_normal" in pdfs.names(), pdfs.get("pdf_normal")
(True, '_random_pdf_normal')
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

from .registry import op_names

__all__ = ["OpNamespace"]


class OpNamespace:
    """The ops a module shows, by attribute name.

    ``prefix``: the op names it shows and the part stripped from them (``"_contrib_"``); with
    ``strip=False`` names keep the prefix (``mx.nd._internal`` shows ``_``-names as they are).
    ``public=True`` shows the names that do not start with ``_`` (the top of ``mx.nd``/``mx.sym``).
    ``exclude``: op-name prefixes left out; ``unlisted``: prefixes of names found but not listed.
    ``shown_as``: put in front of each shown name (``prefix="_random_pdf_", shown_as="pdf_"``: ``pdf_normal``).
    """

    def __init__(self, namespace: dict, factory: Callable[[str], Any], prefix: str = "", *, strip: bool = True,
                 public: bool = False, exclude: tuple[str, ...] = (), unlisted: tuple[str, ...] = (),
                 shown_as: str = ""):
        self._namespace = namespace
        self._factory = factory
        self._prefix = prefix
        self._cut = len(prefix) if strip else 0
        self._public = public
        self._exclude = exclude
        self._unlisted = unlisted
        self._shown_as = shown_as
        self._table: dict[str, str] = {}
        self._seen: frozenset[str] | None = None

    def _attr(self, op: str) -> str | None:
        if self._public:
            return None if op.startswith("_") else op
        if not op.startswith(self._prefix) or (self._exclude and op.startswith(self._exclude)):
            return None
        attr = op[self._cut:]
        return self._shown_as + attr if attr else None

    def table(self) -> dict[str, str]:
        """``{attribute name: op name}`` for every op this namespace shows (registered since, too)."""
        names = op_names()
        if names is not self._seen:
            table = {}
            for op in names:
                attr = self._attr(op)
                if attr is not None:
                    table[attr] = op
            self._table, self._seen = table, names
        return self._table

    def names(self) -> set[str]:
        """The attribute names listed (``dir``, ``__all__``)."""
        table = self.table()
        if not self._unlisted:
            return set(table)
        return {attr for attr, op in table.items() if not op.startswith(self._unlisted)}

    def has(self, attr: str) -> bool:
        return attr in self._namespace or attr in self.table()

    def get(self, attr: str) -> Any | None:
        """The function for ``attr`` (made now and stored in the namespace), or None if no op has that name."""
        value = self._namespace.get(attr)
        if value is not None:
            return value
        op = self.table().get(attr)
        if op is None:
            return None
        value = self._namespace[attr] = self._factory(op)
        return value

    def getattr(self, module: str, attr: str) -> Any:
        """``module.__getattr__``: the function, or MXNet's AttributeError."""
        value = self.get(attr)
        if value is None:
            raise AttributeError(f"module {module!r} has no attribute {attr!r}")
        return value

    def module_hooks(self, module: str) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
        """``(__getattr__, __dir__)`` of a module that shows these ops, for its last lines:
        ``__getattr__, __dir__ = _ops.module_hooks(__name__)``."""

        def module_getattr(attr: str) -> Any:
            return self.getattr(module, attr)

        return module_getattr, self.dir

    def dir(self) -> list[str]:
        """``module.__dir__``: every op it shows, the module's ``__all__``, submodules and private names
        (not the helpers it imports, such as ``Any``: ``dir`` is what editors and users browse)."""
        ns = self._namespace
        listed = set(ns.get("__all__", ()))
        own = {n for n, v in ns.items() if n.startswith("_") or n in listed or isinstance(v, ModuleType)}
        return sorted(own | self.names())
