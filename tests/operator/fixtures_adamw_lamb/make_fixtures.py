"""Record MXNet 1.9.1's results for the AdamW and fused LAMB update ops and for the LAMB optimizer
(tests/operator/test_adamw_lamb.py). Run by hand only, with the reference MXNet:

    /work/venvs/mx191/bin/python tests/operator/fixtures_adamw_lamb/make_fixtures.py

Each op case stores its inputs (``in0``...), the call (JSON ``spec``: op, params, which inputs are
weights written through ``out=``) and every input after the call (``after0``...). The optimizer
cases store the weights after three steps of ``mx.optimizer.LAMB`` through an Updater, given one
index at a time and as lists (MXNet's fused path).
"""

from __future__ import annotations

import json
from pathlib import Path

import mxnet as mx
import numpy as np

HERE = Path(__file__).resolve().parent
rng = np.random.default_rng(20261127)
store: dict[str, np.ndarray] = {}


def arr(*shape, lo=-1.0, hi=1.0, dtype=np.float32):
    return rng.uniform(lo, hi, shape).astype(dtype)


def record(case: str, op: str, inputs: list[np.ndarray], params: dict, weights: list[int]) -> None:
    """Call ``mx.nd._internal.<op>`` with ``out=`` the weight inputs (MXNet leaves skipped outputs unwritten)."""
    xs = [mx.nd.array(x, dtype=x.dtype) for x in inputs]
    outs = [xs[i] for i in weights]
    getattr(mx.nd._internal, op)(*xs, out=outs if len(outs) > 1 else outs[0], **params)
    for i, x in enumerate(inputs):
        store[f"{case}/in{i}"] = x
    for i, x in enumerate(xs):
        store[f"{case}/after{i}"] = x.asnumpy()
    store[f"{case}/spec"] = np.array(json.dumps(dict(op=op, params=params, weights=weights)))


S, T = (3, 4), (5,)
one = np.array([0.7], np.float32)
adamw = dict(lr=0.05, eta=0.8, wd=0.01, beta1=0.8, beta2=0.99, epsilon=1e-6)
record("adamw", "_adamw_update", [arr(*S), arr(*S), arr(*S), arr(*S, lo=0.0), one], adamw, [0])
record("adamw_clip", "_adamw_update", [arr(*S), arr(*S), arr(*S), arr(*S, lo=0.0), one],
       dict(adamw, clip_gradient=0.2), [0])
for tag, bad in (("nan", np.nan), ("inf", np.inf), ("zero", 0.0)):
    record(f"adamw_skip_{tag}", "_adamw_update",
           [arr(*S), arr(*S), arr(*S), arr(*S, lo=0.0), np.array([bad], np.float32)], adamw, [0])
record("mp_adamw", "_mp_adamw_update",
       [arr(*S, dtype=np.float16), arr(*S, dtype=np.float16), arr(*S), arr(*S, lo=0.0), arr(*S), one],
       dict(adamw, clip_gradient=0.3), [0])
record("multi_adamw", "_multi_adamw_update",
       [arr(*S), arr(*S), arr(*S), arr(*S, lo=0.0), arr(*T), arr(*T), arr(*T), arr(*T, lo=0.0), one],
       dict(lrs=(0.05, 0.1), wds=(0.01, 0.0), etas=(1.0, 0.5), clip_gradient=0.4, num_weights=2), [0, 4])
record("multi_adamw_skip", "_multi_adamw_update",
       [arr(*S), arr(*S), arr(*S), arr(*S, lo=0.0), np.array([np.inf], np.float32)],
       dict(lrs=(0.05,), wds=(0.01,), etas=(1.0,), num_weights=1), [0])
record("multi_mp_adamw", "_multi_mp_adamw_update",
       [arr(*S, dtype=np.float16), arr(*S, dtype=np.float16), arr(*S), arr(*S, lo=0.0), arr(*S),
        arr(*T, dtype=np.float16), arr(*T, dtype=np.float16), arr(*T), arr(*T, lo=0.0), arr(*T), one],
       dict(lrs=(0.05, 0.1), wds=(0.01, 0.02), etas=(1.0, 0.5), num_weights=2), [0, 5])
record("multi_lamb", "_multi_lamb_update",
       [arr(*S), arr(*S), arr(*S), arr(*S, lo=0.0), arr(*T), arr(*T), arr(*T), arr(*T, lo=0.0)],
       dict(learning_rates=(0.05, 0.1), wds=(0.01, 0.0), step_count=(2, 5), rescale_grad=0.7, num_tensors=2), [0, 4])
record("multi_lamb_bounds", "_multi_lamb_update",
       [arr(*S), arr(*S), arr(*S), arr(*S, lo=0.0), arr(*T), arr(*T), arr(*T), arr(*T, lo=0.0)],
       dict(learning_rates=(0.05, 0.1), wds=(0.01, 0.0), step_count=(1, 3), bias_correction=False,
            lower_bound=2.1, upper_bound=3.0, clip_gradient=0.3, num_tensors=2), [0, 4])
record("multi_mp_lamb", "_multi_mp_lamb_update",
       [arr(*S, dtype=np.float16), arr(*S, dtype=np.float16), arr(*S), arr(*S, lo=0.0), arr(*S),
        arr(*T, dtype=np.float16), arr(*T, dtype=np.float16), arr(*T), arr(*T, lo=0.0), arr(*T)],
       dict(learning_rates=(0.05, 0.1), wds=(0.01, 0.02), step_count=(4, 1), epsilon=1e-5, num_tensors=2), [0, 5])


def lamb_run(case: str, dtype, fused: bool, **kwargs) -> None:
    """Three LAMB steps on two weights through an Updater; ``fused`` passes lists (MXNet's multi op)."""
    shapes = [S, T]
    w0 = [arr(*s) for s in shapes]
    grads = [[arr(*s) for s in shapes] for _ in range(3)]
    opt = mx.optimizer.LAMB(learning_rate=0.05, wd=0.01, rescale_grad=0.5, **kwargs)
    upd = mx.optimizer.get_updater(opt)
    ws = [mx.nd.array(w, dtype=dtype) for w in w0]
    for step, gs in enumerate(grads):
        g_nd = [mx.nd.array(g, dtype=dtype) for g in gs]
        if fused:
            upd([0, 1], g_nd, ws)
        else:
            for i in range(2):
                upd(i, g_nd[i], ws[i])
        for i in range(2):
            store[f"{case}/grad{step}_{i}"] = gs[i]
    for i in range(2):
        store[f"{case}/w0_{i}"] = w0[i]
        store[f"{case}/w_{i}"] = ws[i].asnumpy()
    store[f"{case}/spec"] = np.array(json.dumps(dict(dtype=np.dtype(dtype).name, fused=fused, kwargs=kwargs)))


lamb_run("opt_lamb", np.float32, False)
lamb_run("opt_lamb_fused", np.float32, True, lower_bound=0.1, upper_bound=5.0)
lamb_run("opt_lamb_mp_fused", np.float16, True, multi_precision=True, clip_gradient=0.4)

np.savez_compressed(HERE / "mxnet_ref.npz", **store)
print(f"wrote {len(store)} arrays to {HERE / 'mxnet_ref.npz'}")
