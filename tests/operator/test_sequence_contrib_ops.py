"""SequenceLast/Reverse, cumsum, moments, hard_sigmoid, ravel/unravel, im2col/col2im, Crop, SVMOutput and the
contrib ops against the real MXNet 1.9.1 (``fixtures_sequence_contrib/``, recorded by its make_fixtures.py), plus
their front ends and errors. Numerical gradients are in the op table (table_sequence_contrib.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from harness import backward, forward
from mxnet_cases import load_cases, numbered

import mxasync as mx
from mxasync.operator import get_op

CASES = load_cases(Path(__file__).parent / "fixtures_sequence_contrib" / "mxnet_ref.npz")


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_mxnet(case):
    a = CASES[case]
    spec = a["spec"]
    params = {k: tuple(v) if isinstance(v, list) else v for k, v in spec["params"].items()}
    inputs, heads = numbered(a, "in"), numbered(a, "head")
    count = get_op(spec["op"]).key_var_num_args  # MXNet's front end fills it from the inputs, as ours does
    if count and count not in params:
        params[count] = len(inputs)
    outs = forward(spec["op"], params, [x.copy() for x in inputs])
    expected = numbered(a, "out")
    visible = get_op(spec["op"]).prepare(**params).num_visible_outputs()  # MXNet shows no hidden outputs
    assert visible == len(expected), case
    for o, e in zip(outs[:visible], expected, strict=True):
        assert o.shape == e.shape and o.dtype == e.dtype, f"{case}: {o.shape} {o.dtype} != {e.shape} {e.dtype}"
        np.testing.assert_allclose(o, e, rtol=1e-5, atol=1e-6, err_msg=case)
    if spec["grads"]:
        grads = backward(spec["op"], params, inputs, outs, heads)
        for i in spec["grads"]:
            np.testing.assert_allclose(grads[i], a[f"grad{i}"], rtol=1e-5, atol=1e-6, err_msg=f"{case}: grad {i}")


@pytest.mark.parametrize("call, msg", [
    (lambda: mx.nd.Crop(mx.nd.zeros((1, 1, 4, 4)), num_args=1, h_w=(3, 3), offset=(2, 0)),
     r"Crop: the window 3x3 at \(y=2, x=0\) does not fit data of shape \(1, 1, 4, 4\)"),
    (lambda: mx.nd.col2im(mx.nd.zeros((1, 5, 4)), output_size=(3, 3), kernel=(2, 2)),
     r"col2im: data has shape \(1, 5, 4\) but kernel=\(2, 2\) over output_size=\(3, 3\) needs \(N, C\*4, 4\)"),
    (lambda: mx.nd.ravel_multi_index(mx.nd.zeros((3, 2)), shape=(4, 5)),
     r"_ravel_multi_index: data has shape \(3, 2\) but shape=\(4, 5\) needs \(2, \.\.\.\)"),
    (lambda: mx.nd.khatri_rao(mx.nd.zeros((2, 3)), mx.nd.zeros((2, 4))),
     r"khatri_rao: every input must be a matrix with the same number of columns"),
    (lambda: mx.nd.cumsum(mx.nd.zeros((2, 3)), axis=2), r"cumsum: axis=2 is out of range for a 2-D input"),
    (lambda: mx.nd.ctc_loss(mx.nd.zeros((4, 2, 3)), mx.nd.zeros((3, 2))),
     r"CTCLoss: label has shape \(3, 2\) but data \(4, 2, 3\) needs \(2, label_length\)"),
])
def test_errors_name_the_op_and_the_shapes(call, msg):
    with pytest.raises(mx.MXNetError, match=msg):
        call().wait_to_read()


def test_symbolic_front_ends_infer_shapes():
    data = mx.sym.Variable("data")
    mean, var = mx.sym.moments(data, axes=(1,))
    assert mx.sym.Group([mean, var]).infer_shape(data=(2, 3, 4))[1] == [(2, 4), (2, 4)]
    last = mx.sym.SequenceLast(data)
    assert last.infer_shape(data=(5, 2, 3))[1] == [(2, 3)]
    cols = mx.sym.im2col(data, kernel=(3, 3), pad=(1, 1))
    assert cols.infer_shape(data=(2, 4, 8, 8))[1] == [(2, 36, 64)]


def test_all_finite_flags_and_multi_sum_sq_in_float32():
    assert mx.nd.all_finite(mx.nd.array([1.0, np.nan])).asnumpy().tolist() == [0.0]
    out = mx.nd.multi_sum_sq(mx.nd.array([300.0, 400.0], dtype="float16"), num_arrays=1)
    assert out.dtype == np.float32 and out.asnumpy().tolist() == [250000.0]  # float16 would overflow


def test_rnn_dropout_between_layers_only_in_training():
    from mxasync.operator.nn.rnn import rnn_param_size

    mx.random.seed(3)
    size = rnn_param_size("lstm", 4, 8, 3, False)
    args = [mx.nd.ones((6, 5, 4)), mx.nd.random.uniform(-0.3, 0.3, shape=(size,)), mx.nd.zeros((3, 5, 8)),
            mx.nd.zeros((3, 5, 8))]
    kw = dict(state_size=8, num_layers=3, mode="lstm")
    plain = mx.nd.RNN(*args, **kw).asnumpy()
    assert np.allclose(mx.nd.RNN(*args, p=0.5, **kw).asnumpy(), plain)  # not recording: no dropout
    with mx.autograd.record(train_mode=True):
        dropped = mx.nd.RNN(*args, p=0.5, **kw).asnumpy()
    assert not np.allclose(dropped, plain)


def test_rnn_errors_name_the_parameter_size():
    with pytest.raises(mx.MXNetError, match=r"RNN: parameters has shape \(10,\) but mode='gru', input size 3, "
                                            r"state_size=4, num_layers=1 needs \(\d+,\)"):
        mx.nd.RNN(mx.nd.ones((2, 1, 3)), mx.nd.ones((10,)), mx.nd.zeros((1, 1, 4)), state_size=4, num_layers=1,
                  mode="gru").wait_to_read()
    with pytest.raises(mx.MXNetError, match="use_sequence_length=True is not supported"):
        mx.sym.RNN(mx.sym.Variable("x"), state_size=2, num_layers=1, mode="lstm",
                   use_sequence_length=True).infer_shape(x=(2, 1, 3))
