"""A fresh interpreter records and differentiates without any other module imported first (the package loads
lazily; the tape must be in place by the first recorded op)."""

from __future__ import annotations

import subprocess
import sys

_SCRIPT = """
import mxasync as mx
with mx.autograd.record(train_mode=True):  # the first recorded op, before anything attached a gradient
    (mx.nd.ones((2,)) * 2).wait_to_read()
x = mx.nd.array([1.0, 2.0]); x.attach_grad()
with mx.autograd.record():
    y = mx.nd.RNN(mx.nd.ones((2, 1, 1)), mx.nd.ones((4,)) * 0.1, mx.nd.zeros((1, 1, 1)), state_size=1,
                  num_layers=1, mode="rnn_tanh").sum() + (x * x).sum()
y.backward()
print(x.grad.asnumpy().tolist())
"""


def test_recording_works_in_a_fresh_process():
    out = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[2.0, 4.0]"
