"""How a Module keeps its per-context parameter copies in step: KVStore set-up and the update step.

MXNet's rules: one context and no 'dist' store means no KVStore at all (the
updater runs on the weights); several contexts sum gradients in the store, and
with ``update_on_kvstore`` the optimizer runs once on the store's copy, which
is then pulled into every context. Keys are parameter names, pushed with
priority ``-index`` so the first layers' gradients (needed first by the next
forward pass) go first.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from ..kvstore import KVStoreBase
from ..kvstore import create as kv_create

__all__ = ["create_kvstore", "initialize_kvstore", "update_params_on_kvstore", "update_params"]

_LARGE_PARAM = 1024 * 1024 * 16  # MXNet updates on the workers when a 'local' store holds anything bigger


def create_kvstore(kvstore, num_device: int, arg_params: dict) -> tuple[KVStoreBase | None, bool]:
    """``(store or None, update_on_kvstore)`` for a ``kvstore`` argument (a type name, a store or None)."""
    update_on_kvstore = bool(int(os.environ.get("MXNET_UPDATE_ON_KVSTORE", "1")))
    if kvstore is None:
        kv = None
    elif isinstance(kvstore, KVStoreBase):
        kv = kvstore
    elif isinstance(kvstore, str):
        if num_device == 1 and "dist" not in kvstore:
            kv = None  # nothing to aggregate
        else:
            kv = kv_create(kvstore)
            if kvstore == "local" and arg_params:
                largest = max(int(np.prod(p.shape)) for p in arg_params.values())
                update_on_kvstore = update_on_kvstore and largest <= _LARGE_PARAM
    else:
        raise TypeError(f"kvstore must be a KVStore, a str or None, got {type(kvstore).__name__}")
    return kv, (kv is not None and update_on_kvstore)


def initialize_kvstore(kvstore: KVStoreBase, param_arrays: Sequence[Sequence], arg_params: dict,
                       param_names: Sequence[str], update_on_kvstore: bool) -> None:
    """Put every parameter into the store; with ``update_on_kvstore`` pull it back to every context."""
    for idx, (name, arrays) in enumerate(zip(param_names, param_arrays, strict=True)):
        kvstore.init(name, arg_params[name])
        if update_on_kvstore:
            kvstore.pull(name, list(arrays), priority=-idx)


def update_params_on_kvstore(param_arrays, grad_arrays, kvstore: KVStoreBase, param_names) -> None:
    """Push each gradient list (summed and applied in the store), pull the new weight into every context."""
    for idx, (name, weights, grads) in enumerate(zip(param_names, param_arrays, grad_arrays, strict=True)):
        if grads[0] is None:
            continue
        kvstore.pushpull(name, list(grads), out=list(weights), priority=-idx)


def update_params(param_arrays, grad_arrays, updater, num_device: int, kvstore: KVStoreBase | None = None,
                  param_names=None) -> None:
    """Sum the gradients in ``kvstore`` (if any), then run ``updater`` once per context on lists.

    Each context's call gets every parameter of that context (index ``idx * num_device + k``), so
    the optimizer can fuse them (SGD: one engine op per ``aggregate_num`` weights).
    """
    updates: list[tuple[list, list, list]] = [([], [], []) for _ in range(num_device)]
    for idx, (weights, grads) in enumerate(zip(param_arrays, grad_arrays, strict=True)):
        if grads[0] is None:
            continue
        if kvstore is not None:
            kvstore.pushpull(param_names[idx], list(grads), priority=-idx)
        for k, (w, g) in enumerate(zip(weights, grads, strict=True)):
            indices, gs, ws = updates[k]
            indices.append(idx * num_device + k)
            gs.append(g)
            ws.append(w)
    for indices, gs, ws in updates:
        if indices:
            updater(indices, gs, ws)
