"""MXNet's shape semantics: 0 is an unknown dimension, filled in from both directions.

Expected values printed by MXNet 1.9.1 for the same graphs.
"""

import mxasync as mx


def _args(sym, **kw):
    arg, out, _ = sym.infer_shape(**kw)
    return dict(zip(sym.list_arguments(), arg, strict=True)), out


def test_partial_shapes_flow_forward():
    a = mx.sym.Variable("a", shape=(0, 10))
    fc = mx.sym.FullyConnected(a, num_hidden=21, name="fc")
    assert fc.infer_shape_partial() == ([(0, 10), (21, 10), (21,)], [(0, 21)], [])
    assert fc.infer_shape() == (None, None, None)
    sc = mx.sym.SliceChannel(a, num_outputs=10, axis=1, squeeze_axis=True)
    assert sc.infer_shape_partial()[1] == [(0,)] * 10
    cat = mx.sym.Concat(a, mx.sym.Variable("b", shape=(0, 5)), dim=1)
    assert cat.infer_shape_partial() == ([(0, 10), (0, 5)], [(0, 15)], [])
    conv = mx.sym.Convolution(mx.sym.Variable("x", shape=(0, 10, 0, 0)), num_filter=21, kernel=(3, 3), pad=(1, 1),
                              name="c")
    assert conv.infer_shape_partial() == ([(0, 10, 0, 0), (21, 10, 3, 3), (21,)], [(0, 21, 0, 0)], [])
    assert mx.sym.Variable("v").infer_shape_partial() == ([()], [()], [])


def test_unknown_dimensions_filled_from_downstream():
    a, b = mx.sym.Variable("a", shape=(0, 10)), mx.sym.Variable("b", shape=(12, 0))
    assert _args(a + b)[0] == {"a": (12, 10), "b": (12, 10)}
    fc = mx.sym.FullyConnected(mx.sym.Variable("a", shape=(0, 10)), num_hidden=21, name="fc")
    args, out = _args(fc + mx.sym.Variable("c", shape=(5, 0)))
    assert (args["a"], args["c"], out) == ((5, 10), (5, 21), [(5, 21)])
    parts = mx.sym.SliceChannel(mx.sym.Variable("a", shape=(0, 15, 0)), num_outputs=3, squeeze_axis=False)
    assert _args(parts[1] + mx.sym.Variable("c", shape=(3, 5, 2)))[0]["a"] == (3, 15, 2)
    cat = mx.sym.Concat(mx.sym.Variable("a", shape=(0, 10)), mx.sym.Variable("b", shape=(0, 5)), dim=1)
    args, _ = _args(mx.sym.Variable("d", shape=(2, 0)) + cat)
    assert args == {"d": (2, 15), "a": (2, 10), "b": (2, 5)}
    conv = mx.sym.Convolution(mx.sym.Variable("a", shape=(0, 10, 0, 0)), num_filter=21, kernel=(3, 3), pad=(1, 1))
    assert _args(conv + mx.sym.Variable("c", shape=(5, 21, 32, 32)))[0]["a"] == (5, 10, 32, 32)


def test_shape_constraint_through_identity_like_rhs():
    w = mx.sym.Variable("weight")
    wt = mx.sym.broadcast_add(w, mx.sym.Variable("wshift", shape=(1,)))
    wt = mx.sym._internal._identity_with_attr_like_rhs(wt, w)
    net = mx.sym.FullyConnected(mx.sym.Variable("data"), weight=wt, num_hidden=11, no_bias=True)
    assert _args(net, data=(7, 100))[0]["weight"] == (11, 100)
    assert float(mx.nd._internal._plus_scalar(mx.nd.ones(1), scalar=2).asscalar()) == 3.0


def test_where_needs_a_known_condition():
    w = mx.sym.where(mx.sym.Variable("c"), mx.sym.Variable("x"), mx.sym.Variable("y"))
    assert w.infer_shape_partial(c=(0, 2), x=(0, 2), y=(0, 2))[1] == [()]
    assert w.infer_shape(c=(2,), x=(2, 3), y=(2, 3))[1] == [(2, 3)]


def test_symbol_has_no_truth_value_and_numpy_ints_are_params():
    import numpy as np
    import pytest

    with pytest.raises(mx.base.NotImplementedForSymbol):
        bool(mx.sym.Variable("x"))
    t = mx.sym.transpose(mx.sym.Variable("a"), axes=(np.int64(2), np.int64(0), np.int64(1)))
    assert t.list_attr() == {"axes": "(2, 0, 1)"}
    assert t.infer_shape(a=(2, 3, 4))[1] == [(4, 2, 3)]


def test_eval_and_atomic_symbol():
    import numpy as np

    out = (mx.sym.Variable("a") * 2).eval(ctx=mx.cpu(), a=mx.nd.array([1.0, 3.0]))
    assert len(out) == 1 and np.allclose(out[0].asnumpy(), [2, 6])
    fc = mx.sym.FullyConnected(mx.sym.Variable("d"), num_hidden=2, name="fc")
    atom = fc._gen_atomic_symbol()
    assert atom.list_arguments() == [] and atom.list_attr() == {"num_hidden": "2"}
