"""Small models for the serving tests: a checkpoint written by Module, its ONNX export, a Gluon block.

Every model takes 1x8x8 examples (so an 8x8 gray image fits) and is small enough that a
batch costs well under a millisecond.
"""

from __future__ import annotations

import numpy as np
import pytest

import mxasync as mx

SHAPE = (1, 8, 8)


def _mlp():
    h = mx.sym.Flatten(mx.sym.Variable("data"), name="flat")
    h = mx.sym.Activation(mx.sym.FullyConnected(h, num_hidden=16, name="fc1"), act_type="relu", name="relu1")
    return mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=4, name="fc2"), name="softmax")


@pytest.fixture(scope="session")
def checkpoint(tmp_path_factory):
    """A checkpoint prefix (epochs 1 and 2 written: the server must load the latest) and its Module."""
    prefix = str(tmp_path_factory.mktemp("serving") / "mlp")
    mod = mx.mod.Module(_mlp(), context=mx.cpu())
    mod.bind(data_shapes=[("data", (4, *SHAPE))], label_shapes=[("softmax_label", (4,))], for_training=False)
    mod.init_params(mx.init.Uniform(0.5))
    mod.save_checkpoint(prefix, 1)
    mod.init_params(mx.init.Xavier(magnitude=3), force_init=True)
    mod.save_checkpoint(prefix, 2)
    return prefix, mod


def module_predict(mod, x: np.ndarray) -> np.ndarray:
    """What Module.predict gives for the examples ``x`` (the reference for every served output)."""
    return mod.predict(mx.io.NDArrayIter(x, batch_size=len(x))).asnumpy()


@pytest.fixture
def examples():
    return np.random.RandomState(0).uniform(0, 1, (12, *SHAPE)).astype(np.float32)


@pytest.fixture(scope="session")
def block():
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Flatten(), mx.gluon.nn.Dense(5, in_units=64, activation="tanh"))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    return net


class Gate:
    """Holds every batch of a model in the engine until released: an engine op writing an array the model reads.

    While held, a batch that was taken stays in flight (``batches_in_flight``), whatever the
    machine's speed; ``release()`` lets it finish.
    """

    def __init__(self):
        self.array = mx.nd.zeros((1, 5))
        self._done = None

    def hold(self) -> None:
        def op(run_ctx, on_complete):
            self._done = on_complete

        mx.engine.get().push_async(op, mx.cpu(), [], [self.array.handle], name="test_gate")

    def release(self) -> None:
        done, self._done = self._done, None
        if done is not None:
            done()


class GatedNet(mx.gluon.HybridBlock):
    """``dense(x) + gate``: a live (not hybridized) block whose batches wait for the gate."""

    def __init__(self, dense, gate: Gate):
        super().__init__()
        self.dense, self.gate = dense, gate

    def hybrid_forward(self, F, x):
        return F.broadcast_add(self.dense(x), self.gate.array)


@pytest.fixture
def gated(block):
    gate = Gate()
    yield GatedNet(block, gate), gate
    gate.release()
