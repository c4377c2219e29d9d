"""mx.np, Gluon and autograd as a type checker sees them: mypy checks this file in the test suite
(tests/test_stubs.py), and each ``reveal_type``-free annotation below must hold."""

from __future__ import annotations

import mxasync as mx
from mxasync import np, npx

npx.set_np()
a: np.ndarray = np.ones((2, 3))
b: np.ndarray = np.einsum("ij,kj->ik", a, a) + np.dot(a, a.T)
c: np.ndarray = np.linalg.norm(b) * np.random.uniform(size=(2, 2))
shape: tuple[int, ...] = np.shape(a)
halves: list[np.ndarray] = np.split(a, 3, axis=1)
same: bool = np.allclose(a, a)
u, s, vt = np.linalg.svd(np.eye(3))

net = mx.gluon.nn.HybridSequential()
net.add(mx.gluon.nn.Dense(4, activation="relu"), mx.gluon.nn.Dense(2))
net.initialize()
trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
loss_fn = mx.gluon.loss.L2Loss()
x = np.random.normal(size=(8, 3))
with mx.autograd.record():
    loss = loss_fn(net(x), np.zeros((8, 2)))
loss.backward()
trainer.step(8)
print(c.shape, shape, len(halves), same, u.shape, float(loss.mean()))
