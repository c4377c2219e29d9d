"""Record MXNet 1.9.1's results for the optimizer update ops of tests/operator/test_optimizer_ops.py.
Run by hand only, with the reference MXNet:

    /work/mxref/bin/python tests/operator/fixtures_optimizer_ops/make_fixtures.py

Each case stores its inputs (``in0``...), params (JSON ``spec``), the op's output ``out`` and
every input after the call (``after0``...), so in-place state updates are checked too.
"""

from __future__ import annotations

import json
from pathlib import Path

import mxnet as mx
import numpy as np

HERE = Path(__file__).resolve().parent
rng = np.random.default_rng(20261123)
store: dict[str, np.ndarray] = {}


def arr(*shape, lo=-1.0, hi=1.0, dtype=np.float32):
    return rng.uniform(lo, hi, shape).astype(dtype)


def record(case: str, op: str, inputs: list[np.ndarray], params: dict) -> None:
    xs = [mx.nd.array(x, dtype=x.dtype) for x in inputs]
    out = getattr(mx.nd, op)(*xs, **params)
    outs = out if isinstance(out, (list, tuple)) else [out]
    for i, x in enumerate(inputs):
        store[f"{case}/in{i}"] = x
    store[f"{case}/out"] = outs[0].asnumpy()
    for i, x in enumerate(xs):
        store[f"{case}/after{i}"] = x.asnumpy()
    store[f"{case}/spec"] = np.array(json.dumps(dict(op=op, params=params)))


S = (3, 4)
common = dict(rescale_grad=0.7, wd=0.01)
record("signsgd", "signsgd_update", [arr(*S), arr(*S)], dict(lr=0.1, **common))
record("signsgd_clip", "signsgd_update", [arr(*S), arr(*S)], dict(lr=0.1, clip_gradient=0.2, **common))
record("signum", "signum_update", [arr(*S), arr(*S), arr(*S)], dict(lr=0.1, momentum=0.9, wd_lh=0.02, **common))
record("signum_clip", "signum_update", [arr(*S), arr(*S), arr(*S)],
       dict(lr=0.05, momentum=0.5, clip_gradient=0.3, **common))
record("ftml", "ftml_update", [arr(*S), arr(*S), arr(*S, lo=0.1), arr(*S, lo=0.0), arr(*S)],
       dict(lr=0.1, t=3, beta1=0.6, beta2=0.999, epsilon=1e-8, **common))
record("ftml_clip", "ftml_update", [arr(*S), arr(*S), arr(*S, lo=0.1), arr(*S, lo=0.0), arr(*S)],
       dict(lr=0.05, t=1, clip_grad=0.2, **common))
record("ftrl", "ftrl_update", [arr(*S), arr(*S), arr(*S), arr(*S, lo=0.0)],
       dict(lr=0.1, lamda1=0.05, beta=1.0, **common))
record("ftrl_clip", "ftrl_update", [arr(*S), arr(*S), arr(*S), arr(*S, lo=0.0)],
       dict(lr=0.2, lamda1=0.2, beta=0.5, clip_gradient=0.25, **common))
record("lamb1", "lamb_update_phase1", [arr(*S), arr(*S), arr(*S), arr(*S, lo=0.0)],
       dict(t=2, beta1=0.9, beta2=0.99, epsilon=1e-6, **common))
record("lamb1_nobias_clip", "lamb_update_phase1", [arr(*S), arr(*S), arr(*S), arr(*S, lo=0.0)],
       dict(t=3, bias_correction=False, clip_gradient=0.3, **common))
record("lamb2", "lamb_update_phase2", [arr(*S), arr(*S), np.array([2.0], np.float32), np.array([0.5], np.float32)],
       dict(lr=0.1))
record("lamb2_bounds", "lamb_update_phase2", [arr(*S), arr(*S), np.array([2.0], np.float32),
                                              np.array([0.5], np.float32)], dict(lr=0.1, lower_bound=0.1,
                                                                                 upper_bound=1.0))
record("lamb2_zero", "lamb_update_phase2", [arr(*S), arr(*S), np.array([0.0], np.float32),
                                            np.array([0.5], np.float32)], dict(lr=0.1))
w16 = arr(*S, dtype=np.float16)
record("mp_lamb1", "mp_lamb_update_phase1", [w16, arr(*S, dtype=np.float16), arr(*S), arr(*S, lo=0.0),
                                             w16.astype(np.float32)], dict(t=2, **common))
record("mp_lamb2", "mp_lamb_update_phase2", [w16, arr(*S), np.array([2.0], np.float32), np.array([0.5], np.float32),
                                             w16.astype(np.float32)], dict(lr=0.1))
record("mp_sgd", "mp_sgd_update", [w16, arr(*S, dtype=np.float16), w16.astype(np.float32)],
       dict(lr=0.1, clip_gradient=0.4, **common))
record("mp_sgd_mom", "mp_sgd_mom_update", [w16, arr(*S, dtype=np.float16), arr(*S), w16.astype(np.float32)],
       dict(lr=0.1, momentum=0.9, **common))
record("mp_nag_mom", "mp_nag_mom_update", [w16, arr(*S, dtype=np.float16), arr(*S), w16.astype(np.float32)],
       dict(lr=0.1, momentum=0.9, clip_gradient=0.3, **common))

np.savez_compressed(HERE / "mxnet_ref.npz", **store)
print(f"wrote {len(store)} arrays to {HERE / 'mxnet_ref.npz'}")
