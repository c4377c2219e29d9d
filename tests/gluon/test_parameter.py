"""Parameter, Constant and ParameterDict: MXNet 1.9's semantics."""

from __future__ import annotations

import numpy as np
import pytest

import mxasync as mx
from mxasync import autograd, gluon


def test_initialize_on_several_contexts():
    p = gluon.Parameter("w", shape=(2, 3), lr_mult=2.0, wd_mult=0.5)
    p.initialize(init=mx.init.Constant(3.0), ctx=[mx.cpu(0), mx.cpu(1)])
    assert p.list_ctx() == [mx.cpu(0), mx.cpu(1)]
    assert len(p.list_data()) == 2 and len(p.list_grad()) == 2
    for d in p.list_data():
        np.testing.assert_array_equal(d.asnumpy(), np.full((2, 3), 3.0))
    assert p.data(mx.cpu(1)).context == mx.cpu(1)
    assert p.lr_mult == 2.0 and p.wd_mult == 0.5
    with pytest.raises(RuntimeError, match="was not initialized on context"):
        p.data(mx.cpu(2))
    with pytest.warns(UserWarning, match="already initialized"):
        p.initialize()
    p.initialize(init=mx.init.Zero(), ctx=mx.cpu(0), force_reinit=True)
    assert p.list_ctx() == [mx.cpu(0)] and p.data().asnumpy().sum() == 0


def test_uninitialized_and_deferred_errors():
    p = gluon.Parameter("w", shape=(2, 3))
    with pytest.raises(RuntimeError, match="has not been initialized"):
        p.data()
    q = gluon.Parameter("q", shape=(0, 3), allow_deferred_init=True)
    q.initialize()
    with pytest.raises(gluon.DeferredInitializationError):
        q.data()
    q.shape = (4, 3)
    q._finish_deferred_init()
    assert q.data().shape == (4, 3)
    with pytest.raises(ValueError, match="invalid shape"):
        gluon.Parameter("bad", shape=(0, 3)).initialize()
    with pytest.raises(AssertionError, match="incompatible"):
        q.shape = (5, 3)


def test_grad_req_and_zero_grad():
    p = gluon.Parameter("w", shape=(3,), grad_req="add")
    p.initialize(init=mx.init.One())
    for _ in range(2):
        with autograd.record():
            y = (p.data() * 2).sum()
        y.backward()
    np.testing.assert_array_equal(p.grad().asnumpy(), [4, 4, 4])
    p.zero_grad()
    np.testing.assert_array_equal(p.grad().asnumpy(), [0, 0, 0])
    p.grad_req = "null"
    with pytest.raises(RuntimeError, match="grad_req='null'"):
        p.grad()
    with pytest.raises(ValueError):
        p.grad_req = "sometimes"
    p.grad_req = "write"
    assert p.grad().shape == (3,)


def test_set_data_reset_ctx_cast_var():
    p = gluon.Parameter("w", shape=(2,))
    p.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    p.set_data(mx.nd.array([1.0, 2.0]))
    np.testing.assert_array_equal(p.data(mx.cpu(1)).asnumpy(), [1, 2])
    p.reset_ctx(mx.cpu(2))
    assert p.list_ctx() == [mx.cpu(2)]
    np.testing.assert_array_equal(p.data().asnumpy(), [1, 2])
    p.cast("float64")
    assert p.data().dtype == np.float64 and p.grad().dtype == np.float64
    v = p.var()
    assert v.name == "w" and v.attr("__shape__") == "(2,)"


def test_constant():
    c = gluon.Constant("c", [[1.0, 2.0]])
    c.initialize()
    assert c.grad_req == "null"
    np.testing.assert_array_equal(c.data().asnumpy(), [[1, 2]])
    with pytest.warns(UserWarning):
        c.grad_req = "write"
    assert c.grad_req == "null"


def test_parameter_dict_get_share_and_io(tmp_path):
    pd = gluon.ParameterDict("net_")
    w = pd.get("w", shape=(2, 0))
    assert w.name == "net_w" and pd.get("w", shape=(0, 3)) is w and w.shape == (2, 3)
    with pytest.raises(AssertionError, match="does not match"):
        pd.get("w", lr_mult=2.0, shape=(5, 3))
    shared = gluon.ParameterDict("net_", shared=pd)
    assert shared.get("w") is w
    c = pd.get_constant("c", mx.nd.ones((2,)))
    assert pd.get_constant("c") is c
    with pytest.raises(KeyError):
        pd.get_constant("nothing")
    pd.initialize(mx.init.One(), ctx=mx.cpu())
    pd.setattr("lr_mult", 0.5)
    assert w.lr_mult == 0.5
    fname = str(tmp_path / "pd.params")
    pd.save(fname, strip_prefix="net_")
    assert set(mx.nd.load(fname)) == {"w", "c"}
    other = gluon.ParameterDict("net_")
    other.get("w", shape=(2, 3))
    other.get_constant("c", mx.nd.zeros((2,)))
    other.load(fname, mx.cpu(), restore_prefix="net_")
    np.testing.assert_array_equal(other["net_w"].data().asnumpy(), np.ones((2, 3)))
    bigger = gluon.ParameterDict("net_")
    bigger.get("w", shape=(2, 3))
    bigger.get("extra", shape=(1,))
    with pytest.raises(AssertionError, match="is missing"):
        bigger.load(fname, restore_prefix="net_")


def test_load_dict_drops_arg_aux_prefixes():
    pd = gluon.ParameterDict()
    pd.get("w", shape=(2,))
    pd.get("m", shape=(2,), grad_req="null")
    pd.load_dict({"arg:w": mx.nd.ones((2,)), "aux:m": mx.nd.zeros((2,))})
    assert pd["w"].data().asnumpy().tolist() == [1, 1]
    with pytest.raises(AssertionError, match="not present"):
        pd.load_dict({"w": mx.nd.ones((2,)), "m": mx.nd.ones((2,)), "z": mx.nd.ones((1,))})
    pd.load_dict({"w": mx.nd.ones((2,)), "m": mx.nd.ones((2,)), "z": mx.nd.ones((1,))}, ignore_extra=True)
