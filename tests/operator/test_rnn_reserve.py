"""The fused RNN op's reserve space: backward reads what a training forward kept (no forward run again),
agrees with a backward that runs the forward again (after an inference forward), reuses the forward's
dropout masks, and an imperative call in inference allocates none; through the op, autograd, a bound
graph and a hybridized gluon layer.  Gradients of every mode against central differences (the op
table, table_sequence_contrib.py, checks the forward only: the op has no numpy reference there)."""

from __future__ import annotations

import numpy as np
import pytest
from harness import GRAD_TOL, NULL, WRITE_TO, backward, forward, numeric_grad, prepare

import mxasync as mx
from mxasync.operator.nn.rnn_stack import param_slices, rnn_param_size

T, N, IN, H = 3, 2, 2, 3

CONFIGS = [
    dict(mode="rnn_tanh", num_layers=2, bidirectional=True),
    dict(mode="rnn_relu", num_layers=2),
    dict(mode="gru", num_layers=2, bidirectional=True),
    dict(mode="lstm", num_layers=2, bidirectional=True),
    dict(mode="lstm", num_layers=2, projection_size=2, bidirectional=True),
    dict(mode="lstm", num_layers=1, lstm_state_clip_min=-0.3, lstm_state_clip_max=0.25),
]


def _inputs(cfg, rng, dtype="float64"):
    dirs = 2 if cfg.get("bidirectional") else 1
    r = cfg.get("projection_size") or H
    size = rnn_param_size(cfg["mode"], IN, H, cfg["num_layers"], bool(cfg.get("bidirectional")),
                          cfg.get("projection_size"))
    states = [rng.uniform(-0.5, 0.5, (cfg["num_layers"] * dirs, N, r))]
    if cfg["mode"] == "lstm":
        states.append(rng.uniform(-0.5, 0.5, (cfg["num_layers"] * dirs, N, H)))
    ins = [rng.uniform(-1, 1, (T, N, IN)), rng.uniform(-0.6, 0.6, (size,))] + states
    return [x.astype(dtype) for x in ins]


def _heads(prop, outs, rng):
    n = prop.num_visible_outputs()
    return [rng.uniform(0.5, 1.5, o.shape) if k < n else np.zeros(o.shape) for k, o in enumerate(outs)]


def _id(cfg):
    return "-".join(f"{k}={v}" for k, v in cfg.items())


@pytest.mark.parametrize("cfg", CONFIGS, ids=_id)
def test_gradients_match_central_differences(cfg):
    params = dict(cfg, state_size=H, state_outputs=True)
    prop = prepare("RNN", params)
    rng = np.random.default_rng(0)
    ins = _inputs(cfg, rng)
    if cfg["mode"] == "rnn_relu":  # away from relu's kink at 0: positive inputs, weights and states
        ins = [np.abs(x) + 0.05 for x in ins]
    outs = forward("RNN", params, ins, is_train=True)
    heads = _heads(prop, outs, rng)
    grads = backward("RNN", params, ins, outs, heads)
    num = numeric_grad("RNN", params, ins, heads)
    for i, (g, n) in enumerate(zip(grads, num, strict=True)):
        np.testing.assert_allclose(g, n, **GRAD_TOL, err_msg=f"{_id(cfg)}: grad of input {i}")


@pytest.mark.parametrize("cfg", CONFIGS, ids=_id)
def test_backward_from_the_reserve_equals_one_that_runs_the_forward_again(cfg):
    params = dict(cfg, state_size=H, state_outputs=True)
    prop = prepare("RNN", params)
    rng = np.random.default_rng(1)
    ins = _inputs(cfg, rng)
    trained = forward("RNN", params, ins, is_train=True)
    assert trained[-1][-1] == 1  # the flag: a training forward filled the reserve
    inferred = forward("RNN", params, ins, is_train=False)
    assert inferred[-1][-1] == 0
    for k in range(prop.num_visible_outputs()):
        np.testing.assert_allclose(trained[k], inferred[k], rtol=1e-12, atol=1e-12)
    heads = _heads(prop, trained, rng)
    from_reserve = backward("RNN", params, ins, trained, heads)
    run_again = backward("RNN", params, ins, inferred, heads)
    for i, (a, b) in enumerate(zip(from_reserve, run_again, strict=True)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=f"grad {i}")


def test_an_empty_reserve_and_skipped_gradients():
    """An inference call's empty reserve: backward runs the forward again; gradients not asked for are
    neither computed nor written."""
    params = dict(mode="gru", num_layers=2, state_size=H, state_outputs=True)
    prop = prepare("RNN", params)
    rng = np.random.default_rng(2)
    ins = _inputs(dict(params), rng)
    outs = forward("RNN", params, ins, is_train=True)
    heads = _heads(prop, outs, rng)
    full = backward("RNN", params, ins, outs, heads)
    empty = forward("RNN", params, ins, outs=[np.empty(o.shape) for o in outs[:-1]] + [np.empty(0)])
    again = backward("RNN", params, ins, empty, heads)
    only_params = backward("RNN", params, ins, outs, heads, req=[NULL, WRITE_TO, NULL])
    for a, b in zip(full, again, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(only_params[1], full[1], rtol=1e-12)
    assert np.isnan(only_params[0]).all() and np.isnan(only_params[2]).all()


def _split_layers(mode, flat, layers, input_size):
    """The flat vector of a ``layers``-layer op as one flat vector per single-layer op."""
    from mxasync.operator.nn.rnn import RNNParam

    slices = param_slices(RNNParam(state_size=H, num_layers=layers, mode=mode), input_size)
    return [np.concatenate([flat[o:o + int(np.prod(s))] for o, s in slices[k]]) for k in range(layers)]


def test_backward_reuses_the_dropout_masks_of_its_forward():
    """Dropout between layers: the gradient is that of layer 2 over (layer 1's output * the forward's
    mask), checked numerically with that mask fixed."""
    params = dict(mode="lstm", num_layers=2, state_size=H, p=0.5)
    prop = prepare("RNN", params)
    rng = np.random.default_rng(3)
    ins = _inputs(dict(params), rng)
    outs = forward("RNN", params, ins, is_train=True)
    mask = outs[-2][0]
    assert set(np.unique(mask)) <= {0.0, 2.0} and 0 < mask.mean() < 2
    head = _heads(prop, outs, rng)[0]
    grads = backward("RNN", params, ins, outs, [head] + [np.zeros(o.shape) for o in outs[1:]])
    one = dict(mode="lstm", num_layers=1, state_size=H)

    def stacked(data, flat):
        w1, w2 = _split_layers("lstm", flat, 2, IN)
        y1 = forward("RNN", one, [data, w1, ins[2][:1], ins[3][:1]])[0]
        return forward("RNN", one, [y1 * mask, w2, ins[2][1:], ins[3][1:]])[0]

    np.testing.assert_allclose(outs[0], stacked(ins[0], ins[1]), rtol=1e-12)

    def loss(data, flat):
        return float((stacked(data, flat) * head).sum())

    eps = 1e-6
    for i in (0, 1):
        num = np.zeros_like(ins[i])
        for j in range(ins[i].size):
            plus, minus = [x.copy() for x in ins[:2]], [x.copy() for x in ins[:2]]
            plus[i].reshape(-1)[j] += eps
            minus[i].reshape(-1)[j] -= eps
            num.reshape(-1)[j] = (loss(*plus) - loss(*minus)) / (2 * eps)
        np.testing.assert_allclose(grads[i], num, rtol=1e-5, atol=1e-7, err_msg=f"grad {i}")


def _nd_inputs(cfg, rng):
    return [mx.nd.array(x, dtype="float32") for x in _inputs(cfg, rng)]


def test_autograd_in_predict_mode_keeps_no_reserve_and_still_differentiates():
    cfg = dict(mode="lstm", num_layers=2, bidirectional=True)
    grads = {}
    for train in (True, False):
        ins = _nd_inputs(cfg, np.random.default_rng(4))
        for x in ins:
            x.attach_grad()
        with mx.autograd.record(train_mode=train):
            out = mx.nd.RNN(*ins, state_size=H, **cfg)
        reserve = out._ag.node.outputs[-1]
        assert reserve.shape == ((0,) if not train else reserve.shape) and (reserve.size > 0) == train
        out.backward(mx.nd.ones(out.shape))
        grads[train] = [x.grad.asnumpy() for x in ins]
    for a, b in zip(grads[True], grads[False], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_a_bound_graph_differentiates_after_a_training_or_an_inference_forward():
    cfg = dict(mode="gru", num_layers=2)
    ins = _nd_inputs(cfg, np.random.default_rng(5))
    names = ["data", "parameters", "state"]
    sym = mx.sym.RNN(*[mx.sym.var(n) for n in names], state_size=H, state_outputs=False, **cfg)
    exe = sym.bind(mx.cpu(), dict(zip(names, ins, strict=True)),
                   args_grad={n: mx.nd.zeros(x.shape) for n, x in zip(names, ins, strict=True)})
    got = []
    for train in (True, False):
        exe.forward(is_train=train)
        exe.backward([mx.nd.ones(exe.outputs[0].shape)])
        got.append([exe.grad_dict[n].asnumpy() for n in names])
    for a, b in zip(*got, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("layer", ["LSTM", "GRU"])
def test_a_hybridized_layer_has_the_gradients_of_the_imperative_one(layer):
    x = mx.nd.array(np.random.default_rng(6).uniform(-1, 1, (4, 3, 5)))
    grads = []
    for hybrid in (False, True):
        net = getattr(mx.gluon.rnn, layer)(6, num_layers=2, bidirectional=True, input_size=5)
        net.initialize(mx.init.Xavier(), force_reinit=True)
        for prm in net.collect_params().values():
            prm.set_data(mx.nd.array(np.random.default_rng(len(prm.name)).uniform(-0.3, 0.3, prm.shape)))
        if hybrid:
            net.hybridize(static_alloc=True)
        with mx.autograd.record():
            loss = (net(x) ** 2).sum()
        loss.backward()
        grads.append({k[len(net.prefix):]: v.grad().asnumpy() for k, v in net.collect_params().items()})
    for k, v in grads[0].items():
        np.testing.assert_allclose(grads[1][k], v, rtol=1e-5, atol=1e-6, err_msg=k)
