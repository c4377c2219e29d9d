"""NumPy-shape mode in symbols, as MXNet 1.9.1 behaves (values printed there): unknown shapes in
partial inference and the ``is_np_shape`` mark of symbol JSON."""

import json

import mxasync as mx


def test_unknown_shape_is_empty_tuple_outside_np_shape_and_none_inside():
    s = mx.sym.sin(mx.sym.var("data"))
    assert s.infer_shape_partial() == ([()], [()], [])
    with mx.np_shape(True):
        assert s.infer_shape_partial() == ([None], [None], [])
        # a partly known shape keeps its -1 dimensions
        assert mx.sym.transpose(mx.sym.var("x")).infer_shape_partial(x=(-1, 3))[1] == [(3, -1)]


def test_batch_dot_and_where_leave_the_output_unknown_until_their_inputs_are_known():
    x, y, c = mx.sym.var("x"), mx.sym.var("y"), mx.sym.var("c")
    bd = mx.sym.batch_dot(x, y)
    w = mx.sym.where(c, x, y)
    assert bd.infer_shape_partial(x=(0, 3, 4), y=(0, 0, 5))[1] == [()]
    assert w.infer_shape_partial(c=(0, 2), x=(0, 2), y=(0, 2))[1] == [()]
    with mx.np_shape(True):
        assert bd.infer_shape_partial(x=(-1, 3, 4), y=(-1, 4, 5))[1] == [(-1, 3, 5)]
        assert bd.infer_shape_partial(x=(-1, 3, 4), y=(-1, -1, 5))[1] == [None]
        assert w.infer_shape_partial(c=(-1, 2), x=(-1, 2), y=(-1, 2))[1] == [None]
        assert w.infer_shape_partial(c=(-1,), x=(2, 2), y=(2, 2))[1] == [None]
        assert w.infer_shape_partial(c=(2,), x=(2, 2), y=(2, 2))[1] == [(2, 2)]


def test_symbol_json_marks_np_shape_graphs():
    net = mx.sym.FullyConnected(mx.sym.var("data"), mx.sym.var("weight", shape=(4, 0)), num_hidden=4)
    assert json.loads(net.tojson())["attrs"] == {"mxnet_version": ["int", 10901]}
    with mx.np_shape(True):
        text = net.tojson()
    assert json.loads(text)["attrs"] == {"is_np_shape": ["int", 1], "mxnet_version": ["int", 10901]}
    assert text.index('"is_np_shape"') < text.index('"mxnet_version"')  # MXNet's key order
    legacy = net.tojson()
    for flag in (False, True):  # a file without the mark loads in either mode; its 0 dims are unknown ones
        with mx.np_shape(flag):
            args, outs, _ = mx.sym.load_json(legacy).infer_shape(data=(2, 7))
            assert args[1] == (4, 7) and outs == [(2, 4)]
