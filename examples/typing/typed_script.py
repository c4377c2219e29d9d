"""A script as an editor or a type checker sees it: mypy checks it in the test suite (tests/test_stubs.py)."""

from __future__ import annotations

import numpy as np

import mxasync as mx

x: mx.nd.NDArray = mx.nd.ones((2, 3), ctx=mx.cpu())
y = mx.nd.relu(x) * 2 + mx.nd.FullyConnected(x, mx.nd.ones((3, 3)), mx.nd.zeros((3,)), num_hidden=3)
z = mx.nd.dot(y, y.T)
total: np.ndarray = z.asnumpy()
data = mx.sym.Variable("data")
net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(data, num_hidden=10, name="fc"), name="softmax")
args: list[str] = net.list_arguments()
gemm = mx.nd.linalg.gemm2(x, x.T)
with mx.autograd.record():
    loss = (x * x).sum()
dense = mx.gluon.nn.Dense(4)
print(total.shape, args, gemm.shape, loss, dense, mx.device("cpu", 0), mx.context.current_context())
