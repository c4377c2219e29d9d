"""Record MXNet 1.9.1's choose_element_0index / fill_element_0index results (and choose's gradient)
for tests/operator/test_element_0index.py. Run by hand:

    /work/mxref/bin/python tests/operator/fixtures_element_0index/make_fixtures.py
"""

from pathlib import Path

import mxnet as mx
import numpy as np

rng = np.random.default_rng(7)
lhs = rng.uniform(-1, 1, (5, 4)).astype(np.float32)
idx = np.array([0, 3, 7, -2, 2], np.float32)  # two out of range
mhs = rng.uniform(-1, 1, 5).astype(np.float32)
head = rng.uniform(0.5, 1.5, 5).astype(np.float32)
a = mx.nd.array(lhs)
a.attach_grad()
with mx.autograd.record():
    y = mx.nd.choose_element_0index(a, mx.nd.array(idx))
y.backward(mx.nd.array(head))
fill = mx.nd.fill_element_0index(mx.nd.array(lhs), mx.nd.array(mhs), mx.nd.array(idx))
np.savez_compressed(Path(__file__).with_name("mxnet_ref.npz"), lhs=lhs, idx=idx, mhs=mhs, head=head,
                    choose=y.asnumpy(), choose_grad=a.grad.asnumpy(), fill=fill.asnumpy())
