"""The store a training loop uses (MXNet's ``model._create_kvstore``), shared by gluon's Trainer and Module.

>>> kv, update_on_kvstore = create_kvstore("local", 1, {})   # one device: nothing to aggregate
>>> kv, update_on_kvstore
(None, False)
>>> kv, update_on_kvstore = create_kvstore("local", 2, {})
>>> kv.type, update_on_kvstore
('local', True)
"""

from __future__ import annotations

import os

import numpy as np

from .base import KVStoreBase, create

__all__ = ["create_kvstore"]

#: MXNet updates on the workers when a 'local' store holds a parameter bigger than this
LARGE_PARAM = 1024 * 1024 * 16


def create_kvstore(kvstore, num_device: int, arg_params: dict) -> tuple[KVStoreBase | None, bool]:
    """``(store or None, update_on_kvstore)`` for a ``kvstore`` argument (a type name, a store or None).

    A string makes a store unless one device and no distribution leave nothing to aggregate;
    ``update_on_kvstore`` starts from ``MXNET_UPDATE_ON_KVSTORE`` (default 1), is off for a
    'local' store holding a parameter over :data:`LARGE_PARAM` elements, and needs a store
    that can run the optimizer (``is_capable("optimizer")``).
    """
    update_on_kvstore = bool(int(os.environ.get("MXNET_UPDATE_ON_KVSTORE", "1")))
    if kvstore is None:
        kv = None
    elif isinstance(kvstore, KVStoreBase):
        kv = kvstore
    elif isinstance(kvstore, str):
        if num_device == 1 and "dist" not in kvstore:
            kv = None  # nothing to aggregate
        else:
            kv = create(kvstore)
            if kvstore == "local" and arg_params:
                largest = max(int(np.prod(p.shape)) for p in arg_params.values())
                update_on_kvstore = update_on_kvstore and largest <= LARGE_PARAM
    else:
        raise TypeError(f"kvstore must be a KVStore, a str or None, got {type(kvstore).__name__}")
    if kv is None:
        return None, False
    return kv, update_on_kvstore and kv.is_capable("optimizer")
