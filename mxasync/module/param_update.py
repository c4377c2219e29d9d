"""How a Module keeps its per-context parameter copies in step: KVStore set-up and the update step.

MXNet's rules: one context and no 'dist' store means no KVStore at all (the
updater runs on the weights); several contexts sum gradients in the store, and
with ``update_on_kvstore`` the optimizer runs once on the store's copy, which
is then pulled into every context. Keys are parameter names, pushed with
priority ``-index`` so the first layers' gradients (needed first by the next
forward pass) go first.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..kvstore import KVStoreBase

__all__ = ["initialize_kvstore", "update_params_on_kvstore", "update_params"]


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
