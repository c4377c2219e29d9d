"""Ops that give their input variables a default initializer (MXNet's FSetInputVarAttrOnCompose):
a prelu gamma starts at 0.25 unless the variable names its own init."""

import json

import mxasync as mx


def _gamma_after_init(sym):
    mod = mx.mod.Module(sym)
    mod.bind(data_shapes=[("data", (4, 3))])
    mod.init_params()
    return list(mod.get_params()[0].values())[0].asnumpy()


def test_prelu_gamma_defaults_to_a_quarter():
    data = mx.sym.Variable("data")
    sym = mx.sym.LeakyReLU(data=data, act_type="prelu", name="act")
    assert (_gamma_after_init(sym) == 0.25).all()
    nodes = {n["name"]: n for n in json.loads(sym.tojson())["nodes"]}
    assert nodes["act_gamma"]["attrs"]["__init__"] == '["Constant", {"value": 0.25}]'


def test_own_init_wins():
    data = mx.sym.Variable("data")
    gamma = mx.sym.Variable("gamma", init=mx.init.One())
    assert (_gamma_after_init(mx.sym.LeakyReLU(data=data, gamma=gamma, act_type="prelu")) == 1).all()
