"""Table rows: ops behind contrib layers (SyncBatchNorm, the fused RNN layers' _rnn_param_concat) against numpy
references."""

from __future__ import annotations

import numpy as np
import reference_nn as ref
from cases import Case, uniform


def _aux_bn(rng, shapes, dtype):
    c = shapes[0][1]
    return [rng.uniform(-0.5, 0.5, c).astype(dtype), rng.uniform(0.5, 1.5, c).astype(dtype)]


def _sync_bn(x, g, b, mm, mv, ndev=1, key="", **kw):
    return ref.batchnorm(x, g, b, mm, mv, **kw)


CASES = [
    Case("_rnn_param_concat", [((6,), (4,), (6,))], ref=lambda *xs, num_args, dim: np.concatenate(xs, dim),
         params=dict(num_args=3, dim=0)),
    Case("_contrib_SyncBatchNorm", [((4, 3, 2), (3,), (3,))], ref=_sync_bn,
         params=dict(fix_gamma=False, key="bn0"), aux=_aux_bn, is_train=True,
         gens=[uniform(), uniform(0.5, 1.5), uniform()], name="SyncBatchNorm-train"),
    Case("_contrib_SyncBatchNorm", [((4, 3), (3,), (3,))], name="SyncBatchNorm-test",
         ref=lambda x, g, b, mm, mv, **kw: _sync_bn(x, g, b, mm, mv, train=False, **kw),
         params=dict(fix_gamma=True), aux=_aux_bn, gens=[uniform(), uniform(0.5, 1.5), uniform()]),
]
