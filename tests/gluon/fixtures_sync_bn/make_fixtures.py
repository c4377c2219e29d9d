"""Record gluon.contrib.nn.SyncBatchNorm over N cpu contexts from MXNet 1.9.1 (writes sync_bn.npz here).

Run with /work/venvs/mx191/bin/python. A net of two SyncBatchNorm layers (keys differ) on N = 2
contexts and of one on N = 3, two training steps each (rounds repeat): every device's outputs, its
input gradients, its gamma/beta gradients and the moving statistics after each step. MXNet 1.9.1's
blocking barrier hangs its backward for two layers on 3 cpu contexts, and for a loss such as
``(y * y * c).sum()`` on 2: backward goes through ``autograd.backward(outputs, head_grads)`` here.
"""

import os

import mxnet as mx
import numpy as np
from mxnet import autograd, gluon

B, C, H, W = 3, 4, 2, 3
rng = np.random.default_rng(11)
store = {}
for n in (2, 3):
    ctxs = [mx.cpu(i) for i in range(n)]
    net = gluon.nn.HybridSequential(prefix=f"n{n}_")
    with net.name_scope():
        net.add(gluon.contrib.nn.SyncBatchNorm(in_channels=C, num_devices=n, momentum=0.8, epsilon=1e-4))
        if n == 2:
            net.add(gluon.contrib.nn.SyncBatchNorm(in_channels=C, num_devices=n))
    net.initialize(ctx=ctxs)
    for k, layer in enumerate(net):
        g = rng.uniform(0.5, 1.5, C).astype(np.float32)
        b = rng.uniform(-0.5, 0.5, C).astype(np.float32)
        layer.gamma.set_data(mx.nd.array(g))
        layer.beta.set_data(mx.nd.array(b))
        store[f"n{n}/gamma{k}"], store[f"n{n}/beta{k}"] = g, b
    for step in range(2):
        x = (rng.standard_normal((n * B, C, H, W)) * 2 + 1).astype(np.float32)
        dy = rng.standard_normal((n * B, C, H, W)).astype(np.float32)
        store[f"n{n}/s{step}/x"], store[f"n{n}/s{step}/dy"] = x, dy
        xs = gluon.utils.split_and_load(mx.nd.array(x), ctxs)
        dys = gluon.utils.split_and_load(mx.nd.array(dy), ctxs)
        for xi in xs:
            xi.attach_grad()
        with autograd.record():
            ys = [net(xi) for xi in xs]
        autograd.backward(ys, dys)
        store[f"n{n}/s{step}/y"] = np.concatenate([y.asnumpy() for y in ys])
        store[f"n{n}/s{step}/dx"] = np.concatenate([xi.grad.asnumpy() for xi in xs])
        for k, layer in enumerate(net):
            for p in ("gamma", "beta"):
                store[f"n{n}/s{step}/d{p}{k}"] = np.stack([getattr(layer, p).grad(c).asnumpy() for c in ctxs])
            for p in ("running_mean", "running_var"):
                store[f"n{n}/s{step}/{p}{k}"] = np.stack([getattr(layer, p).data(c).asnumpy() for c in ctxs])
np.savez(os.path.join(os.path.dirname(os.path.abspath(__file__)), "sync_bn.npz"), **store)
