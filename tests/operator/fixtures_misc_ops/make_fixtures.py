"""Record MXNet 1.9.1's results for the smaller ops of issue 24 (tests/operator/test_misc_ops.py):
IdentityAttachKLSparseReg through a bound executor (output, gradient, the aux state backward updates),
contrib.BatchNormWithReLU under autograd in training (outputs, gradients, moving statistics),
contrib.getnnz / contrib.edge_id on CSR matrices, contrib.RROIAlign, contrib.hawkesll and _onehot_encode (MXNet cannot run _zeros_without_dtype
imperatively: its dtype -1 is "unknown"). By hand only:

    /work/venvs/mx191/bin/python tests/operator/fixtures_misc_ops/make_fixtures.py
"""

from __future__ import annotations

from pathlib import Path

import mxnet as mx
import numpy as np

HERE = Path(__file__).resolve().parent
rng = np.random.default_rng(20261127)
store: dict[str, np.ndarray] = {}
f32 = np.float32

# IdentityAttachKLSparseReg: forward, backward (the penalty's gradient), the moving average after backward
x = rng.uniform(0.1, 0.9, (5, 3)).astype(f32)
s = mx.sym.IdentityAttachKLSparseReg(mx.sym.var("data"), sparseness_target=0.2, penalty=0.01, momentum=0.8)
ex = s.simple_bind(mx.cpu(), data=x.shape)
ex.arg_dict["data"][:] = x
aux_name = s.list_auxiliary_states()[0]
ex.aux_dict[aux_name][:] = 0.4
head = rng.uniform(0.5, 1.5, x.shape).astype(f32)
ex.forward(is_train=True)
ex.backward(mx.nd.array(head))
store.update({"kl/data": x, "kl/head": head, "kl/out": ex.outputs[0].asnumpy(),
              "kl/grad": ex.grad_dict["data"].asnumpy(), "kl/moving_avg": ex.aux_dict[aux_name].asnumpy()})

# BatchNormWithReLU in training: outputs, gradients of data/gamma/beta, the updated moving statistics
data = rng.standard_normal((4, 3, 2, 2)).astype(f32)
gamma, beta = rng.uniform(0.5, 1.5, 3).astype(f32), rng.uniform(-0.5, 0.5, 3).astype(f32)
mm, mv = rng.uniform(-0.2, 0.2, 3).astype(f32), rng.uniform(0.8, 1.2, 3).astype(f32)
xs = [mx.nd.array(a) for a in (data, gamma, beta)]
aux = [mx.nd.array(mm), mx.nd.array(mv)]
for a in xs:
    a.attach_grad()
head = rng.uniform(0.5, 1.5, data.shape).astype(f32)
with mx.autograd.record(train_mode=True):
    out = mx.nd.contrib.BatchNormWithReLU(*xs, *aux, fix_gamma=False, momentum=0.7, eps=1e-4)
out.backward(mx.nd.array(head))
store.update({"bnrelu/data": data, "bnrelu/gamma": gamma, "bnrelu/beta": beta, "bnrelu/mm": mm, "bnrelu/mv": mv,
              "bnrelu/head": head, "bnrelu/out": out.asnumpy(), "bnrelu/mm_after": aux[0].asnumpy(),
              "bnrelu/mv_after": aux[1].asnumpy()})
for name, a in zip(("data", "gamma", "beta"), xs, strict=True):
    store[f"bnrelu/grad_{name}"] = a.grad.asnumpy()

# getnnz and edge_id on a CSR adjacency matrix
dense = (rng.uniform(size=(5, 6)) < 0.4) * rng.uniform(1, 2, (5, 6))
csr = mx.nd.array(dense.astype(f32)).tostype("csr")
u, v = rng.integers(0, 5, 8).astype(f32), rng.integers(0, 6, 8).astype(f32)
store.update({"csr/dense": dense.astype(f32), "csr/u": u, "csr/v": v,
              "csr/nnz": mx.nd.contrib.getnnz(csr).asnumpy(), "csr/nnz_rows": mx.nd.contrib.getnnz(csr, axis=1).asnumpy(),
              "csr/edge_id": mx.nd.contrib.edge_id(csr, mx.nd.array(u), mx.nd.array(v)).asnumpy()})

# the legacy internals
idx = np.array([2, 0, 3], f32)
store["onehot/indices"] = idx
store["onehot/out"] = mx.nd._internal._onehot_encode(mx.nd.array(idx), mx.nd.zeros((3, 4))).asnumpy()

# RROIAlign (forward only: MXNet has no gradient), rotated ROIs inside, across and outside the map
rdata = rng.standard_normal((2, 3, 7, 9)).astype(f32)
rois = np.array([[0, 4.0, 3.0, 4.0, 3.0, 30.0], [1, 2.0, 5.0, 6.0, 2.0, -45.0], [0, 8.5, 6.5, 3.0, 5.0, 90.0],
                 [1, 0.0, 0.0, 0.5, 0.5, 0.0], [0, 12.0, 9.0, 8.0, 6.0, 10.0]], f32)
store.update({"rroi/data": rdata, "rroi/rois": rois})
store["rroi/out_a"] = mx.nd.contrib.RROIAlign(mx.nd.array(rdata), mx.nd.array(rois), pooled_size=(2, 3),
                                              spatial_scale=1.0).asnumpy()
store["rroi/out_b"] = mx.nd.contrib.RROIAlign(mx.nd.array(rdata), mx.nd.array(rois), pooled_size=(3, 2),
                                              spatial_scale=0.5, sampling_ratio=2).asnumpy()

# hawkesll: log likelihood, memory, and the gradients of lda, alpha, beta (ragged sequences, one empty)
N, K, T = 4, 3, 5
hk = {"lda": rng.uniform(0.5, 2, (N, K)).astype(f32), "alpha": np.array([0.2, 0.3, 0.4], f32),
      "beta": np.array([1.0, 2.0, 3.0], f32), "state": rng.uniform(0, 1, (N, K)).astype(f32),
      "lags": rng.uniform(0.1, 1.0, (N, T)).astype(f32), "marks": rng.integers(0, K, (N, T)).astype(np.int32),
      "valid_length": np.array([1, 3, 5, 0], f32), "max_time": np.array([6.0, 7.0, 8.0, 2.0], f32)}
hx = {n: mx.nd.array(v, dtype=v.dtype) for n, v in hk.items()}
for n in ("lda", "alpha", "beta"):
    hx[n].attach_grad()
with mx.autograd.record():
    ll, mem = mx.nd.contrib.hawkesll(*hx.values())
head = np.array([1.0, 0.5, 2.0, 1.5], f32)
ll.backward(mx.nd.array(head))
store.update({f"hawkes/{n}": v for n, v in hk.items()})
store.update({"hawkes/head": head, "hawkes/ll": ll.asnumpy(), "hawkes/out_state": mem.asnumpy()})
store.update({f"hawkes/grad_{n}": hx[n].grad.asnumpy() for n in ("lda", "alpha", "beta")})

np.savez_compressed(HERE / "mxnet_ref.npz", **store)
print(f"wrote {len(store)} arrays to {HERE / 'mxnet_ref.npz'}")
