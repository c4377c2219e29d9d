"""Common subexpression elimination at bind and ``Executor.get_optimized_symbol`` (MXNet 1.9.1's names,
recorded from MXNet for the same graphs)."""

from __future__ import annotations

import numpy as np
import pytest

import mxasync as mx

A, B, C = mx.sym.var("a"), mx.sym.var("b"), mx.sym.var("c")


def _bind(sym, monkeypatch, cse: str, grad_req="write"):
    monkeypatch.setenv("MXNET_ELIMINATE_COMMON_EXPR", cse)
    return sym.simple_bind(mx.cpu(), grad_req=grad_req, **{n: (2, 3) for n in sym.list_inputs() if n in "abc"})


def _internals(exe):
    return exe.get_optimized_symbol().get_internals().list_outputs()


def test_duplicate_subtree_is_merged(monkeypatch):
    s = mx.sym.elemwise_add(mx.sym.elemwise_add(A, B, name="p1"), mx.sym.elemwise_add(A, B, name="p2"), name="top")
    assert _internals(_bind(s, monkeypatch, "1")) == ["a", "b", "p1_output", "top_output"]
    assert _internals(_bind(s, monkeypatch, "0")) == ["a", "b", "p1_output", "p2_output", "top_output"]


def test_merging_cascades_up_the_graph(monkeypatch):
    ab1, ab2 = mx.sym.elemwise_add(A, B, name="ab1"), mx.sym.elemwise_add(A, B, name="ab2")
    s = mx.sym.elemwise_add(mx.sym.elemwise_add(ab1, C, name="x1"), mx.sym.elemwise_add(ab2, C, name="x2"), name="t")
    assert _internals(_bind(s, monkeypatch, "1")) == ["a", "b", "ab1_output", "c", "x1_output", "t_output"]


def test_outputs_that_become_one_entry_get_a_copy(monkeypatch):
    d = A + 1
    s = mx.sym.Group([mx.sym.elemwise_mul(A, d, name="m1"), mx.sym.elemwise_mul(A, d, name="m2")])
    opt = _bind(s, monkeypatch, "1").get_optimized_symbol()
    assert opt.list_outputs() == ["m1_output", "m1_0_copy_output"]
    assert len(opt.get_internals().list_outputs()) == len(s.get_internals().list_outputs())
    exe = _bind(s, monkeypatch, "1")
    outs = exe.forward(a=np.ones((2, 3)))
    assert outs[0] is not outs[1]
    assert list(exe.output_dict) == ["m1_output", "m2_output"]  # names of the bound symbol, as MXNet


BN_INPUTS = [mx.sym.var(n) for n in ("g", "beta", "mm", "mv")]


def _bn(name):
    return mx.sym.BatchNorm(A, *BN_INPUTS, name=name)


@pytest.mark.parametrize("make", [
    lambda: mx.sym.Dropout(A, p=0.5) + mx.sym.Dropout(A, p=0.5),                    # random numbers
    lambda: (A + 1) + (A + 2),                                                      # other params
    lambda: mx.sym.elemwise_add(A, B) + mx.sym.elemwise_add(B, A),                  # other inputs
    lambda: _bn("bn1") + _bn("bn2"),                                                # writes aux states
])
def test_never_merged(make, monkeypatch):
    s = make()
    opt = _bind(s, monkeypatch, "1").get_optimized_symbol()
    assert opt.get_internals().list_outputs() == s.get_internals().list_outputs()


@pytest.mark.parametrize("grad_req", ["write", "add"])
def test_results_and_gradients_unchanged(grad_req, monkeypatch):
    s = mx.sym.Group([mx.sym.sin(A * B) * mx.sym.sin(A * B) + C, mx.sym.exp(A * B) + mx.sym.exp(A * B)])
    rng = np.random.default_rng(0)
    data = {n: rng.uniform(0.1, 1, (2, 3)) for n in "abc"}
    results = []
    for cse in ("0", "1"):
        exe = _bind(s, monkeypatch, cse, grad_req)
        outs = exe.forward(is_train=True, **data)
        exe.backward([mx.nd.ones_like(o) for o in outs])
        exe.forward(is_train=True, **data)
        exe.backward([mx.nd.ones_like(o) for o in outs])
        results.append(([o.asnumpy() for o in outs], [g.asnumpy() for g in exe.grad_arrays],
                        len(exe.get_optimized_symbol().get_internals().list_outputs())))
    (o0, g0, n0), (o1, g1, n1) = results
    for x, y in zip(o0 + g0, o1 + g1, strict=True):
        np.testing.assert_allclose(x, y, rtol=1e-6)
    ab = data["a"] * data["b"]
    np.testing.assert_allclose(o1[1], 2 * np.exp(ab), rtol=1e-6)
    np.testing.assert_allclose(g1[2], np.ones((2, 3)) * (2 if grad_req == "add" else 1))
    assert n0 - n1 == 5  # a*b three times, sin and exp once each


def test_unchanged_graph_is_returned_as_a_copy(monkeypatch):
    s = mx.sym.FullyConnected(A, num_hidden=4, name="fc")
    exe = s.simple_bind(mx.cpu(), a=(2, 3))
    opt = exe.get_optimized_symbol()
    assert opt is not s and opt.tojson() == s.tojson()


def test_output_repeated_in_the_bound_symbol_gets_no_copy(monkeypatch):
    s = A * 2
    g = mx.sym.Group([s, mx.sym.elemwise_add(A, B, name="p1"), s, mx.sym.elemwise_add(A, B, name="p2")])
    opt = _bind(g, monkeypatch, "1").get_optimized_symbol()
    assert opt.list_outputs() == [f"{s.name}_output", "p1_output", f"{s.name}_output", "p1_0_copy_output"]
    grads = []
    for cse in ("0", "1"):  # the gradient is the same with and without the pass
        exe = _bind(g, monkeypatch, cse)
        exe.forward(is_train=True, a=np.ones((2, 3)), b=np.ones((2, 3)))
        exe.backward([mx.nd.full((2, 3), v) for v in (1.0, 2.0, 10.0, 100.0)])
        grads.append(exe.grad_dict["a"].asnumpy())
    np.testing.assert_array_equal(grads[0], grads[1])


def test_nodes_without_inputs_are_not_merged(monkeypatch):
    s = (mx.sym.zeros(shape=(2, 3)) + A) * (mx.sym.zeros(shape=(2, 3)) + A)
    opt = _bind(s, monkeypatch, "1").get_optimized_symbol()
    assert opt.get_internals().list_outputs() == s.get_internals().list_outputs()
