"""lr_mult, wd_mult, ctx_group, force_mirroring: attributes (stored as ``__key__``), never op params.

Expected values are MXNet 1.9.1's (list_attr/attr_dict show both forms; JSON stores the hidden one).
"""

import json
import warnings

import pytest

import mxasync as mx


def test_op_kwargs_become_hidden_attributes():
    d = mx.sym.Variable("d")
    fc = mx.sym.FullyConnected(d, num_hidden=3, name="fc1", lr_mult=0, wd_mult="x", ctx_group="g")
    assert fc.list_attr() == {"num_hidden": "3", "__lr_mult__": "0", "lr_mult": "0", "__wd_mult__": "x",
                              "wd_mult": "x", "__ctx_group__": "g", "ctx_group": "g"}
    assert fc.attr("lr_mult") == fc.attr("__lr_mult__") == "0"
    # the variables the op creates carry its attributes (MXNet's rule)
    assert fc.attr_dict()["fc1_weight"]["__lr_mult__"] == "0"
    nodes = {n["name"]: n for n in json.loads(fc.tojson())["nodes"]}
    assert nodes["fc1"]["attrs"] == {"__ctx_group__": "g", "__lr_mult__": "0", "__wd_mult__": "x", "num_hidden": "3"}
    assert fc.infer_shape(d=(2, 5))[1] == [(2, 3)]


def test_attr_argument_and_scope():
    d = mx.sym.Variable("d", attr={"mood": "angry", "force_mirroring": "True"})
    assert d.attr("force_mirroring") == d.attr("__force_mirroring__") == "True"
    with mx.AttrScope(ctx_group="dev1"):
        c = mx.sym.Convolution(d, kernel=(1, 1), num_filter=1, name="c", attr={"wd_mult": "2"})
    assert c.list_attr()["wd_mult"] == c.list_attr()["__wd_mult__"] == "2"
    assert c.attr("ctx_group") == "dev1"


def test_unknown_param_still_rejected():
    with pytest.raises(mx.MXNetError, match="foo"):
        mx.sym.FullyConnected(mx.sym.Variable("d"), num_hidden=3, foo=1)


def test_plot_network_warns_on_repeated_names():
    pytest.importorskip("graphviz")
    net = mx.sym.FullyConnected(mx.sym.Variable("data"), name="fc", num_hidden=4)
    net = mx.sym.FullyConnected(mx.sym.Activation(net, act_type="relu"), name="fc", num_hidden=2)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        mx.viz.plot_network(net, shape={"data": (3, 5)})
    assert [str(x.message).split(": ")[-1] for x in w] == ["fc_weight,fc_bias,fc"]
