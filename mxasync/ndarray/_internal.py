"""``mx.nd._internal``: every registered op whose name starts with ``_`` (``_crop_assign``,
``_sample_uniform``, ...), as MXNet keeps them out of ``mx.nd``'s public listing."""

from __future__ import annotations

from ..operator.registry import list_ops
from .register import make_function

__all__ = sorted(n for n in list_ops(include_aliases=True) if n.startswith("_") and not n.startswith(("_test_",
                                                                                                         "_doc_")))


def __getattr__(name: str):
    # ops registered after this module loaded (plugins) are found on first use
    if name.startswith("_") and not name.startswith("__") and name in list_ops(include_aliases=True):
        fn = globals()[name] = make_function(name)
        return fn
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


for _name in __all__:
    globals()[_name] = make_function(_name)
del _name
