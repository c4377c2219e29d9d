"""The ``@_export`` decorator of the ``_api_*`` modules (and ``mx.npx``'s): each function, written once
against a frontend ``F``, goes into its module's ``FUNCS`` table under its public name."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["exporter"]


def exporter(table: dict[str, Callable]) -> Callable:
    """``export(fn, name=None)``: store ``fn`` in ``table`` under ``name`` (default: its own name without
    leading ``_``) and give it that name; usable as ``@export``.

    >>> funcs = {}
    >>> export = exporter(funcs)
    >>> @export
    ... def _sum(F, a):
    ...     return a
    >>> funcs["sum"].__name__
    'sum'
    """

    def export(fn: Callable, name: str | None = None) -> Callable:
        name = name or fn.__name__.lstrip("_")
        fn.__name__ = fn.__qualname__ = name
        table[name] = fn
        return fn

    return export
