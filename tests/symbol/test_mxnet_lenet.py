"""The LeNet exported by the real MXNet 1.9.1 (tests/fixtures/mxnet): load, bind, reproduce it.

Dropout is random, so the training cases replay the mask MXNet drew: the cpu
generator factory is swapped (``register_resource_factory``) for one whose
uniforms fall below ``1 - p`` exactly where MXNet kept a unit, and
``mx.random.seed`` makes the engine rebuild its generator from it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import mxasync as mx
from mxasync import symbol as sym
from mxasync.runtime import resource

HERE = Path(__file__).parent.parent / "fixtures" / "mxnet"
TOL = dict(rtol=1e-4, atol=1e-5)


@pytest.fixture(scope="module")
def io():
    return dict(np.load(HERE / "lenet-io.npz"))


@pytest.fixture(scope="module")
def net():
    return sym.load(str(HERE / "lenet-symbol.json"))


class MaskReplay:
    """A stand-in generator: ``random(shape)`` yields 0 where the mask keeps a unit, 0.99 where it drops one."""

    def __init__(self, mask: np.ndarray):
        self.mask = mask

    def random(self, shape):
        assert tuple(shape) == self.mask.shape
        return np.where(self.mask > 0, 0.0, 0.99)


@pytest.fixture
def replay_mask():
    saved = resource._factories(mx.cpu())

    def install(mask):
        resource.register_resource_factory("cpu", lambda seq, ctx: MaskReplay(mask), saved[1])
        mx.random.seed(0)

    yield install
    resource.register_resource_factory("cpu", *saved)
    mx.random.seed(0)


def bind(s, io, grad_req):
    args = {n: mx.nd.array(io[n] if n in ("data", "softmax_label") else io[f"arg:{n}"]) for n in s.list_arguments()}
    aux = {n: mx.nd.array(io[f"aux:{n}"]) for n in s.list_auxiliary_states()}
    grads = {n: mx.nd.zeros(a.shape) for n, a in args.items()} if grad_req != "null" else None
    exe = s.bind(mx.cpu(), args, args_grad=grads, grad_req=grad_req, aux_states=aux)
    seen: dict = {}
    exe.set_monitor_callback(lambda name, arr: seen.__setitem__(name, arr.copy()))
    return exe, seen


def test_params_file_and_shapes(net, io):
    params = mx.nd.load(str(HERE / "lenet-0000.params"))
    assert {k.split(":", 1)[1] for k in params} == set(net.list_arguments() + net.list_auxiliary_states()) - {
        "data", "softmax_label"}
    info = json.loads((HERE / "lenet-shapes.json").read_text())
    arg_shapes, out_shapes, aux_shapes = net.infer_shape(data=io["data"].shape)
    for name, shape in zip(net.list_arguments(), arg_shapes, strict=True):
        assert list(shape) == list(io[f"shape:arg:{name}"]), name
    assert list(out_shapes[0]) == list(io["shape:out:softmax_output"])
    for name, shape in zip(net.list_auxiliary_states(), aux_shapes, strict=True):
        assert list(shape) == list(io[f"shape:aux:{name}"])
    assert info  # the json twin of the shapes is present


def test_inference_outputs_and_internals(net, io):
    exe, seen = bind(net, io, "null")
    out = exe.forward(is_train=False)[0].asnumpy()
    np.testing.assert_allclose(out, io["infer:out"], **TOL)
    for key in io:
        if key.startswith("infer:internal:"):
            name = key.split(":", 2)[2]
            np.testing.assert_allclose(seen[name].asnumpy(), io[key], err_msg=name, **TOL)
    internals = net.get_internals()
    fc1 = internals["fc1_output"]
    ex2, _ = bind(fc1, io, "null")
    np.testing.assert_allclose(ex2.forward()[0].asnumpy(), io["infer:internal:fc1_output"], **TOL)


def test_training_pass(net, io, replay_mask):
    replay_mask(io["train:internal:drop_mask"])
    exe, seen = bind(net, io, "write")
    exe.forward(is_train=True)
    exe.backward()
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), io["train:out"], **TOL)
    for key in io:
        if key.startswith("train:internal:"):
            name = key.split(":", 2)[2]
            np.testing.assert_allclose(seen[name].asnumpy(), io[key], err_msg=name, **TOL)
        elif key.startswith("train:grad:"):
            name = key.split(":", 2)[2]
            np.testing.assert_allclose(exe.grad_dict[name].asnumpy(), io[key], err_msg=name, **TOL)
        elif key.startswith("train:aux_after:"):
            name = key.split(":", 2)[2]
            np.testing.assert_allclose(exe.aux_dict[name].asnumpy(), io[key], err_msg=name, **TOL)


def test_head_gradient_pass(net, io, replay_mask):
    replay_mask(io["head:internal:drop_mask"])
    head = net.get_internals()["add_output"]
    exe, seen = bind(head, io, "write")
    exe.forward(is_train=True)
    exe.backward([mx.nd.array(io["head:head_grad"])])
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), io["head:out"], **TOL)
    np.testing.assert_allclose(seen["drop_output"].asnumpy(), io["head:internal:drop_output"], **TOL)
    for key in io:
        if key.startswith("head:grad:"):
            name = key.split(":", 2)[2]
            np.testing.assert_allclose(exe.grad_dict[name].asnumpy(), io[key], err_msg=name, **TOL)
        elif key.startswith("head:aux_after:"):
            name = key.split(":", 2)[2]
            np.testing.assert_allclose(exe.aux_dict[name].asnumpy(), io[key], err_msg=name, **TOL)
