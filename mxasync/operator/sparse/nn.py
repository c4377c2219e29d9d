"""Storage rules of neural-network ops that MXNet checks for sparse inputs.

``BatchNorm`` runs on sparse inputs through the dense fallback, except with ``fix_gamma=True``,
which MXNet refuses for sparse arrays ("fix_gamma=True is not supported for sparse ndarrays").
"""

from __future__ import annotations

from .formats import DEFAULT, Fallback, register_sparse

__all__: list[str] = []


def _batch_norm_infer(prop, in_stypes):
    if all(s == DEFAULT for s in in_stypes):
        return None
    if prop.params.fix_gamma:
        raise prop.error("fix_gamma=True is not supported for sparse ndarrays (MXNet's rule, its issue #11647)")
    return Fallback([DEFAULT] * prop.num_outputs())


register_sparse("BatchNorm", infer=_batch_norm_infer)
