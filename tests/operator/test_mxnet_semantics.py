"""Behaviours MXNet 1.9.1's operator tests pin, checked against values recorded from MXNet.

``fixtures_semantics/mxnet_ref.npz`` holds LeakyReLU outputs and autograd gradients and integer
reductions recorded from MXNet (``fixtures_semantics/make_fixtures.py``); the shape tables below
are MXNet's own (its ``test_reshape``, ``test_slice_partial_infer``), each checked on MXNet 1.9.1.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import mxasync as mx
from mxasync.operator import get_op, list_ops
from mxasync.operator.kernels.stl_sort import mxnet_order

FIXTURE = Path(__file__).parent / "fixtures_semantics" / "mxnet_ref.npz"


@pytest.fixture(scope="module")
def ref():
    with np.load(FIXTURE) as z:
        return {k: z[k] for k in z.files}


def _cases(ref, prefix):
    return sorted({k.split("/")[0] for k in ref if k.startswith(prefix)})


# -- SliceChannel with one output ---------------------------------------------------------------------
@pytest.mark.parametrize("squeeze", [True, False])
def test_split_into_one_part_in_a_bound_graph(squeeze):
    x = mx.sym.Variable("x")
    y = mx.sym.split(x, num_outputs=1, axis=1, squeeze_axis=squeeze) * 2
    exe = y.simple_bind(mx.cpu(), x=(2, 1, 3))
    data = np.arange(6, dtype=np.float32).reshape(2, 1, 3)
    out = exe.forward(is_train=True, x=mx.nd.array(data))[0].asnumpy()
    np.testing.assert_array_equal(out, (data[:, 0] if squeeze else data) * 2)
    exe.backward([mx.nd.ones(out.shape)])
    np.testing.assert_array_equal(exe.grad_dict["x"].asnumpy(), np.full((2, 1, 3), 2.0))


def test_lstm_stack_unrolled_one_step_through_module():
    stack = mx.rnn.SequentialRNNCell()
    for i in range(3):
        stack.add(mx.rnn.LSTMCell(num_hidden=4, prefix=f"l{i}_"))
    out, _ = stack.unroll(1, inputs=mx.sym.Variable("data"), layout="NTC", merge_outputs=True)
    mod = mx.mod.Module(mx.sym.Group([mx.sym.MakeLoss(mx.sym.sum(out)), mx.sym.BlockGrad(out)]),
                        data_names=["data"], label_names=None)
    mod.bind(data_shapes=[("data", (2, 1, 3))], inputs_need_grad=True)
    mod.init_params(initializer=mx.init.Uniform(0.5))
    mod.forward_backward(mx.io.DataBatch([mx.nd.ones((2, 1, 3))]))
    assert mod.get_outputs()[1].asnumpy().shape == (2, 1, 4)
    grad = mod.get_input_grads()[0].asnumpy()
    assert grad.shape == (2, 1, 3) and np.abs(grad).sum() > 0


# -- ordering, index and integer arithmetic ------------------------------------------------------------
def test_axis_none_flattens_and_index_ops_give_int64():
    x = mx.nd.array([[3, 1, 2], [0, 5, 4]])
    assert mx.nd.sort(x, axis=None).asnumpy().tolist() == [0, 1, 2, 3, 4, 5]
    assert mx.nd.argsort(x, axis=None).asnumpy().tolist() == [3, 1, 2, 0, 5, 4]
    assert mx.nd.topk(x, axis=None, k=2).asnumpy().tolist() == [4, 5]
    r = mx.nd.ravel_multi_index(mx.nd.array([[1, 2], [0, 1]]), shape=(3, 4))
    assert r.dtype == np.float32 and r.asnumpy().tolist() == [4, 9]
    for arr, want in ((mx.nd.shape_array(x), [2, 3]), (mx.nd.size_array(x), [6])):
        assert arr.dtype == np.int64 and arr.asnumpy().tolist() == want


def test_integer_elementwise_ops_wrap_around():
    a = mx.nd.array([120, 100], dtype="int8")
    for got, want in ((a + a, [-16, -56]), (a * a, [64, 16]), (a * 3, [104, 44]), (a + 100, [-36, -56]),
                      (mx.nd.broadcast_add(a, a), [-16, -56])):
        assert got.dtype == np.int8 and got.asnumpy().tolist() == want
    u = mx.nd.array([1], dtype="uint8") - mx.nd.array([2], dtype="uint8")
    assert u.dtype == np.uint8 and u.asnumpy().tolist() == [255]


def test_integer_reductions_wrap_around_as_mxnet(ref):
    cases = _cases(ref, "reduce_")
    assert len(cases) == 18
    for case in cases:
        spec = json.loads(str(ref[f"{case}/spec"]))
        x = ref[f"{case}/in0"]
        got = getattr(mx.nd, spec["op"])(mx.nd.array(x, dtype=x.dtype), axis=spec["axis"]).asnumpy()
        want = ref[f"{case}/out0"]
        assert got.dtype == want.dtype, case
        np.testing.assert_array_equal(got, want, err_msg=case)


# -- sequence ops: integer lengths ----------------------------------------------------------------------
@pytest.mark.parametrize("op", ["SequenceMask", "SequenceReverse", "SequenceLast"])
def test_sequence_ops_take_integer_lengths_at_type_inference(op):
    d, n = mx.sym.Variable("d"), mx.sym.Variable("n")
    s = getattr(mx.sym, op)(d, n, use_sequence_length=True)
    ins, outs, _ = s.infer_type(d="float32", n="int32")
    assert [np.dtype(t) for t in ins] == [np.float32, np.int32] and np.dtype(outs[0]) == np.float32
    exe = s.simple_bind(mx.cpu(), d=(3, 2, 2), n=(2,), type_dict={"n": "int32"}, grad_req={"d": "write", "n": "null"})
    exe.arg_dict["d"][:] = 1.0
    exe.arg_dict["n"][:] = mx.nd.array([1, 2], dtype="int32")
    out = exe.forward(is_train=True)[0]
    assert out.asnumpy().sum() == {"SequenceMask": 6.0, "SequenceReverse": 12.0, "SequenceLast": 4.0}[op]
    exe.backward([mx.nd.ones(out.shape)])
    assert exe.grad_dict["d"].shape == (3, 2, 2)


# -- shapes: Reshape codes, slice and transpose partial inference ---------------------------------------
RESHAPE_CASES = [  # MXNet's test_reshape table: (src, shape, reverse, dst)
    ((2, 3, 5, 5), (0, -1), False, (2, 75)), ((2, 3, 5, 5), (0, 0, -1), False, (2, 3, 25)),
    ((5, 3, 4, 5), (0, -1, 0), False, (5, 15, 4)), ((2, 3, 5, 4), (-1, 0, 0), False, (8, 3, 5)),
    ((2, 4, 5, 3), (-1, 2, 2, 1), False, (30, 2, 2, 1)), ((2, 3, 5, 6), (6, 1, -2), False, (6, 1, 5, 6)),
    ((2, 3, 5, 6), (-3, -3), False, (6, 30)), ((2, 3, 5, 6), (-3, -1), False, (6, 30)),
    ((64,), (-4, 16, -1), False, (16, 4)), ((64, 1, 2, 3), (-4, 16, -1, -2), False, (16, 4, 1, 2, 3)),
    ((2, 3, 5, 5), (0, -1), True, (5, 30)), ((5, 3, 4, 5), (0, -1, 0), True, (3, 20, 5)),
    ((2, 3, 4, 5), (3, -1, 0), True, (3, 8, 5)), ((2, 3, 5, 5), (5, 3, 0, -1), True, (5, 3, 5, 2)),
    ((2, 3, 5, 6), (-2, 1, 30), True, (2, 3, 1, 30)), ((2, 3, 5, 6), (-3, -3), True, (6, 30)),
    ((64,), (16, 4, -4), True, (16, 4)), ((64,), (16, -1, -4), True, (16, 4)),
    ((1, 2, 3, 64), (-2, -1, 16, -4), True, (1, 2, 3, 4, 16)),
]


@pytest.mark.parametrize("src,shape,reverse,dst", RESHAPE_CASES)
def test_reshape_codes(src, shape, reverse, dst):
    net = mx.sym.load_json(mx.sym.Reshape(mx.sym.Variable("data"), shape=shape, reverse=reverse).tojson())
    assert net.infer_shape(data=src)[1][0] == dst
    x = np.arange(np.prod(src), dtype=np.float32).reshape(src)
    np.testing.assert_array_equal(mx.nd.Reshape(mx.nd.array(x), shape=shape, reverse=reverse).asnumpy(), x.reshape(dst))
    for i in range(len(src)):  # one input size unknown: found back from the output
        held = tuple(0 if j == i else d for j, d in enumerate(src))
        both = mx.sym.elemwise_add(mx.sym.Variable("data").reshape(shape, reverse=reverse), mx.sym.ones(shape=dst))
        ins, outs, _ = both.infer_shape(data=held)
        assert (ins[0], outs[0]) == (src, dst)


def test_reshape_minus_four_needs_two_values():
    with pytest.raises(mx.MXNetError, match=r"Reshape.*shape=\(2, -4\).*-4 must be followed by two"):
        mx.sym.Reshape(mx.sym.Variable("x"), shape=(2, -4), reverse=True).infer_shape(x=(2, 6))


def test_slice_partial_shapes_keep_unknown_dims():
    def out(sym):
        return sym.infer_shape_partial()[1][0]

    v = mx.sym.var("data", shape=(0, 20))
    for begin, end, step, want in [((None, None), (None, 10), (), (0, 10)), ((None, None), (None, 10), (None, 2), (0, 5)),
                                   ((None, 3), (5, 10), (), (0, 7)), ((2, 3), (None, 10), (3, 3), (0, 3))]:
        assert out(mx.sym.slice(v, begin=begin, end=end, step=step)) == want
    v = mx.sym.var("data", shape=(10, 0))
    assert out(mx.sym.slice_axis(v, axis=0, begin=0, end=5)) == (5, 0)
    assert out(mx.sym.slice_axis(v, axis=1, begin=0, end=5)) == (10, 0)


def test_transpose_infers_its_input_from_its_output():
    x = mx.sym.Variable("x")
    ins, _, _ = (mx.sym.transpose(x, axes=(1, 2, 0)) + mx.sym.Variable("w")).infer_shape(w=(3, 4, 2))
    assert ins[0] == (2, 3, 4)
    for o1, o2 in (([2, 3], [-1, -1]), ([2, -1], [3, -1])):  # MXNet's test_transpose_infer_shape_back/_mixed
        y = (mx.sym.ones(shape=o1) + mx.sym.transpose(mx.sym.ones(shape=o2))).bind(mx.cpu(), args={}).forward()
        assert y[0].shape == (2, 3)


# -- LeakyReLU gradients --------------------------------------------------------------------------------
def test_leaky_relu_family_against_mxnet(ref):
    cases = _cases(ref, "prelu_") + _cases(ref, "act_")
    assert len(cases) == 12
    for case in cases:
        params = json.loads(str(ref[f"{case}/spec"]))
        xs = [mx.nd.array(ref[f"{case}/in{i}"]) for i in range(2 if params["act_type"] == "prelu" else 1)]
        for x in xs:
            x.attach_grad()
        with mx.autograd.record():
            out = mx.nd.LeakyReLU(*xs, **params)
        out.backward(mx.nd.array(ref[f"{case}/head0"]))
        np.testing.assert_allclose(out.asnumpy(), ref[f"{case}/out0"], rtol=1e-5, atol=1e-6, err_msg=case)
        for i, x in enumerate(xs):
            want = ref[f"{case}/grad{i}"]
            assert x.grad.shape == want.shape, case
            np.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-4, atol=1e-5, err_msg=f"{case} grad{i}")


def test_prelu_gamma_that_does_not_fit_is_refused():
    with pytest.raises(mx.MXNetError, match=r"LeakyReLU.*gamma has shape \(5,\) but data \(3, 4\)"):
        mx.sym.LeakyReLU(mx.sym.Variable("x"), mx.sym.Variable("g"), act_type="prelu").infer_shape(x=(3, 4), g=(5,))


def test_rrelu_gradient_is_the_drawn_slope():
    x = mx.nd.array(-np.linspace(0.5, 1.5, 12, dtype=np.float32).reshape(3, 4))
    x.attach_grad()
    with mx.autograd.record(train_mode=True):
        y = mx.nd.LeakyReLU(x, act_type="rrelu", lower_bound=0.1, upper_bound=0.3)
    y.backward()
    slope = (y / x).asnumpy()
    assert ((slope >= 0.1) & (slope <= 0.3)).all()
    np.testing.assert_allclose(x.grad.asnumpy(), slope, rtol=1e-5)
    with mx.autograd.record(train_mode=False):
        y = mx.nd.LeakyReLU(x, act_type="rrelu", lower_bound=0.1, upper_bound=0.3)
    np.testing.assert_allclose((y / x).asnumpy(), 0.2, rtol=1e-6)


# -- errors MXNet raises ----------------------------------------------------------------------------------
@pytest.mark.parametrize("call,match", [
    (lambda: mx.nd.depth_to_space(mx.nd.ones((1, 3, 2, 2)), 2), r"depth_to_space: block_size=2: the 3 channels"),
    (lambda: mx.nd.depth_to_space(mx.nd.ones((1, 4, 0, 3)), 2), r"depth_to_space: block_size=2: dimension 2 .* is 0"),
    (lambda: mx.nd.depth_to_space(mx.nd.ones((1, 4, 2, 2)), 0), r"depth_to_space: block_size=0"),
    (lambda: mx.nd.space_to_depth(mx.nd.ones((1, 2, 1, 4)), 2), r"space_to_depth: block_size=2 does not divide"),
    (lambda: mx.nd.space_to_depth(mx.nd.ones((1, 0, 4, 4)), 2), r"space_to_depth: block_size=2: dimension 1 .* is 0"),
    (lambda: mx.nd.diag(mx.nd.ones((3, 4)), k=5), r"diag: k=5: diagonal 5 does not exist .* \(3, 4\)"),
    (lambda: mx.nd.diag(mx.nd.ones((3, 4)), k=-4), r"diag: k=-4"),
    (lambda: mx.nd.Pooling(mx.nd.ones((1, 1, 10)), kernel=2, stride=2, pad=2, pooling_convention="same"),
     r"Pooling: pooling_convention='same' .* pad=\(2,\) must be 0"),
    (lambda: mx.nd.Pooling(mx.nd.ones((1, 1, 4, 4)), kernel=(2, 2), pooling_convention="same"),
     r"Pooling: pooling_convention='same' supports 1-D pooling only"),
    (lambda: mx.sym.zeros((2, -3)).infer_shape(), r"_zeros.*shape=.*dimension 1 is -3"),
    (lambda: mx.nd.random.uniform(shape=(2, -3)), r"_random_uniform: shape=\(2, -3\).*dimension 1 is -3"),
])
def test_errors_mxnet_raises(call, match):
    with pytest.raises(mx.MXNetError, match=match):
        call().wait_to_read()


def test_edge_cases_mxnet_allows():
    assert mx.nd.diag(mx.nd.ones((3, 3)), k=3).shape == (0,)  # an empty diagonal is fine
    assert mx.nd.diag(mx.nd.ones((2, 3, 4)), k=3).shape == (4, 0)
    same = mx.nd.Pooling(mx.nd.ones((1, 1, 10)), kernel=2, stride=2, pad=(0, 0, 0), pooling_convention="same")
    assert same.shape == (1, 1, 5)  # only the first len(kernel) values of pad count
    assert mx.sym.zeros((2, -1)).infer_shape_partial()[1][0] == (2, 0)  # -1: not known yet


# -- ops without parameters ignore unknown keywords, warning once -----------------------------------------
def test_param_less_ops_ignore_unknown_keywords_with_one_warning():
    a, b = mx.nd.ones((2, 3)), mx.nd.ones((2, 1))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert mx.nd.broadcast_maximum(a, b, axis=1).shape == (2, 3)
        assert mx.nd.broadcast_maximum(a, b, axis=1).shape == (2, 3)
        assert mx.sym.broadcast_maximum(mx.sym.Variable("x"), mx.sym.Variable("y"), axis=1).infer_shape(
            x=(2, 3), y=(2, 1))[1] == [(2, 3)]
    msgs = [str(w.message) for w in seen if "takes no parameters" in str(w.message)]
    assert len(msgs) <= 1 and all("broadcast_maximum" in m and "axis=1" in m for m in msgs)
    bad = []
    for name in list_ops():
        op = get_op(name)
        if op.param_cls.model_fields:
            continue
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            try:
                op.prepare(zz_unknown_keyword=1)
                op.prepare(zz_unknown_keyword=2)
            except mx.MXNetError as exc:
                bad.append(f"{name}: {exc}")
                continue
        if len([w for w in seen if "zz_unknown_keyword" in str(w.message)]) != 1:
            bad.append(f"{name}: {len(seen)} warnings")
    assert not bad, bad[:5]
    with pytest.raises(mx.MXNetError, match="unknown parameter"):  # ops with params still refuse them
        mx.nd.sum(a, zz_unknown_keyword=1)


# -- more of MXNet's test_operator.py ---------------------------------------------------------------------
@pytest.mark.parametrize("op,want", [("shape_array", [4, 3]), ("size_array", [12])])
def test_shape_and_size_array_have_a_zero_gradient(op, want):
    xg = mx.nd.full((4, 3), 7.0)
    exe = getattr(mx.sym, op)(mx.sym.var("x")).bind(mx.cpu(), args={"x": mx.nd.ones((4, 3))}, args_grad={"x": xg})
    exe.forward(is_train=True)
    exe.backward([mx.nd.ones((4, 3))])  # a head of any shape: nothing reads it (MXNet's test passes one)
    assert exe.outputs[0].asnumpy().tolist() == want and (xg.asnumpy() == 0).all()


def test_symbolic_sort_axis_none_flattens():
    a = mx.sym.Variable("a")
    for sym in (mx.sym.sort(a, axis=None), mx.sym.sort(a, axis=None, is_ascend=False), mx.sym.argsort(a, axis=None)):
        assert mx.sym.load_json(sym.tojson()).infer_shape(a=(5, 5))[1] == [(25,)]
    assert mx.sym.topk(a, axis=None, k=3).infer_shape(a=(5, 5))[1] == [(3,)]
    assert mx.sym.sum(a, axis=None).infer_shape(a=(5, 5))[1] == [(1,)]  # None there is the default


def test_unravel_index_with_an_open_first_dimension():
    data = np.array([[3, 0, 2], [4, 1, 0], [2, 2, 1]])
    flat = np.ravel_multi_index(data, (5, 6, 3))
    for shape in ((5, 6, 3), (-1, 6, 3)):
        np.testing.assert_array_equal(mx.nd.unravel_index(mx.nd.array(flat), shape=shape).asnumpy(), data)
        np.testing.assert_array_equal(mx.nd.ravel_multi_index(mx.nd.array(data), shape=shape).asnumpy(), flat)


def test_reshape_target_shape_legacy_form():
    net = mx.sym.load_json(mx.sym.Reshape(mx.sym.Variable("data"), target_shape=(2, 0)).tojson())
    assert net.infer_shape(data=(2, 3, 5, 5))[1] == [(2, 75)]
    assert mx.nd.Reshape(mx.nd.ones((2, 3, 4)), target_shape=(0, 0), keep_highest=True).shape == (2, 12)


def test_integer_arange_makes_start_and_step_integers_first():
    # MXNet (and numpy 1.23): 1, 2, 3, 4 ... not int(1.3 * k)
    assert mx.nd.arange(1.3, 10, 1.3, dtype="int32").asnumpy().tolist() == [1, 2, 3, 4, 5, 6, 7]
    assert mx.nd.arange(1.3, 6, 1.3, repeat=2, dtype="int32").asnumpy().tolist() == [1, 1, 2, 2, 3, 3, 4, 4]
    assert mx.nd.arange(50, -50, -20, dtype="uint8").asnumpy().tolist() == [50, 30, 10, 246, 226]
    got = mx.sym.arange(1.3, 10, 1.3, dtype="int32").eval()[0].asnumpy().tolist()
    assert got == [1, 2, 3, 4, 5, 6, 7]


def test_integer_mod_gradient_is_zero_for_a_zero_head():
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    c = mx.sym.cast(a, dtype="int32") % mx.sym.cast(b, dtype="int32")
    ga, gb = mx.nd.full((2, 2), 5.0), mx.nd.full((2, 2), 5.0)
    exe = c.bind(mx.cpu(), args={"a": mx.nd.array([[5, 0], [7, 3]]), "b": mx.nd.array([[0, 2], [3, 0]])},
                 args_grad=[ga, gb])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's remainder by zero
        exe.forward(is_train=True)
        exe.backward([mx.nd.full((2, 2), 0.5)])  # 0 once cast to the int32 output's gradient
    assert (ga.asnumpy() == 0).all() and (gb.asnumpy() == 0).all()


def test_check_symbolic_backward_ignores_extra_head_gradients():
    from mxasync.test_utils import check_symbolic_backward

    x, g = mx.sym.Variable("x"), mx.sym.Variable("gamma")
    y = mx.sym.LeakyReLU(data=x, gamma=g, act_type="prelu")
    xa, gam = np.array([[-1.0, 2.0], [3.0, -4.0]]), np.array([0.1, 0.2])
    want_x = np.where(xa > 0, 1.0, gam)
    want_g = np.where(xa > 0, 0.0, xa).sum(axis=0)
    check_symbolic_backward(y, [xa, gam], [np.ones((2, 2)), np.ones(2)], [want_x, want_g])  # MXNet's test_prelu


def test_check_symbolic_backward_asnumpy_keeps_each_arrays_dtype():
    from mxasync.test_utils import check_symbolic_backward

    sym = mx.sym.softmax(data=mx.sym.Variable("data"), length=mx.sym.Variable("length"), use_length=True, axis=1)
    location = {"data": mx.nd.array(np.random.rand(2, 3)), "length": mx.nd.array([2, 3], dtype="int32")}
    check_symbolic_backward(sym, location, [np.ones((2, 3), dtype=np.float32)],  # MXNet's test_softmax_with_length
                            [np.zeros((2, 3)), np.zeros(2, dtype=np.int32)], rtol=1e-2, atol=1e-3, dtype="asnumpy")


@pytest.mark.parametrize("dtype", ["float32", "int8"])
@pytest.mark.parametrize("is_ascend", [True, False])
def test_topk_of_long_rows_orders_ties_as_mxnets_cpu_kernel(dtype, is_ascend):
    # long rows take a partition instead of a full sort (test_order's 100 x 300096 topk): the same values, and
    # ties in the order of MXNet's std::partial_sort (tests/operator/test_tie_order.py checks that order
    # against MXNet itself)
    x = np.random.default_rng(3).integers(-20, 20, size=(3, 6000)).astype(dtype)
    for k in (1, 7, 300):
        got = mx.nd.topk(mx.nd.array(x, dtype=dtype), axis=1, k=k, is_ascend=is_ascend, ret_typ="both")
        want = np.stack([mxnet_order(row, k, is_ascend) for row in x])
        np.testing.assert_array_equal(got[1].asnumpy(), want)
        key = x if is_ascend else -x.astype(np.int64)
        np.testing.assert_array_equal(got[0].asnumpy(), np.take_along_axis(x, np.argsort(key, axis=1)[:, :k], 1))
