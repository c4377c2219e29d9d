"""``mx.sym.sparse``: the ops with sparse storage rules, under MXNet's names (every ``mx.sym`` op is
here; ``mx.sym.sparse.retain`` is ``_sparse_retain``).  Storage types are inferred at bind."""

from __future__ import annotations

__all__: list[str] = []


def __getattr__(name: str):
    from .. import symbol as _sym

    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    fn = getattr(_sym._internal, "_sparse_" + name, None) or getattr(_sym, name, None)
    if fn is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = fn
    return fn
