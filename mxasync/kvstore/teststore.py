"""``mx.kv.create('teststore')``: MXNet 1.9's minimal store for testing custom-store code paths.

It keeps nothing: ``broadcast`` copies the value into ``out`` and
``pushpull`` sums the values (onto the first one's context) into ``out`` (or
back into the values).  It cannot run an optimizer, so a Gluon Trainer on it
updates on the workers (``update_on_kvstore=False``).

>>> import mxasync as mx
>>> kv = mx.kv.create('teststore')
>>> a, b = mx.nd.ones((2,)), mx.nd.ones((2,)) * 2
>>> kv.pushpull(0, [a, b]); a.asnumpy().tolist(), kv.is_capable('optimizer')
([3.0, 3.0], False)
"""

from __future__ import annotations

from ..base import MXAsyncError
from ..ndarray.ndarray import NDArray
from .base import KVStoreBase, register

__all__ = ["TestStore"]


def _as_list(x) -> list:
    return list(x) if isinstance(x, (list, tuple)) else [x]


@register("teststore")
class TestStore(KVStoreBase):
    """A store without state: broadcast and pushpull only."""

    __test__ = False  # not a pytest test class

    def broadcast(self, key, value, out, priority: int = 0) -> None:
        for o in _as_list(out):
            o[:] = value

    def pushpull(self, key, value, out=None, priority: int = 0) -> None:
        if isinstance(value, NDArray):
            reduced = value
            targets = _as_list(out) if out is not None else []
        else:
            ctx = value[0].context
            reduced = value[0].as_in_context(ctx).copy()
            for v in value[1:]:
                reduced += v.as_in_context(ctx)
            targets = list(value) if out is None else _as_list(out)
        for o in targets:
            o[:] = reduced.as_in_context(o.context)

    def is_capable(self, capability: str) -> bool:
        if capability.lower() == "optimizer":
            return False
        raise MXAsyncError(f"Unknown capability: {capability}")

    def set_optimizer(self, optimizer) -> None:
        raise NotImplementedError("teststore cannot run an optimizer")

    def save_optimizer_states(self, fname: str, dump_optimizer: bool = False) -> None:
        raise NotImplementedError("teststore keeps no optimizer states")

    def load_optimizer_states(self, fname: str) -> None:
        raise NotImplementedError("teststore keeps no optimizer states")
