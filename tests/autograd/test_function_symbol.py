"""autograd.Function (Python forward/backward as one graph node), get_symbol of a recorded graph,
_fresh_grad, and what ``from mxasync.autograd import *`` hands out."""

import numpy as np
import pytest

import mxasync as mx
from mxasync import autograd


class _DivMul(autograd.Function):
    def forward(self, x, y):
        self.save_for_backward(x, y)
        return x / y, x * y

    def backward(self, dm, dn):
        x, y = self.saved_tensors
        return dm / y + dn * y, dn * x - dm * x / y / y


def test_function_gradients_match_the_ops_it_wraps():
    x = mx.nd.array([1.0, 2.0, 3.0])
    y = mx.nd.array([0.5, 1.5, 2.0])
    x.attach_grad()
    y.attach_grad()
    with autograd.record():
        m, n = _DivMul()(x, y)
        loss = (m * 2 + n).sum()
    loss.backward()
    gx, gy = x.grad.asnumpy(), y.grad.asnumpy()
    with autograd.record():
        loss = ((x / y) * 2 + x * y).sum()
    loss.backward()
    np.testing.assert_allclose(gx, x.grad.asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(gy, y.grad.asnumpy(), rtol=1e-6)


def test_function_called_once_and_identity_output():
    class Ident(autograd.Function):
        def forward(self, x):
            return x

        def backward(self, dy):
            return dy * 3

    x = mx.nd.ones((2,))
    x.attach_grad()
    f = Ident()
    with autograd.record():
        y = f(x)
    assert y is not x and x._ag.node is None  # the input keeps its variable entry
    y.backward()
    assert x.grad.asnumpy().tolist() == [3.0, 3.0]
    with pytest.raises(mx.MXNetError, match="once"):
        f(x)
    with autograd.record():  # no input in the graph: nothing recorded
        z = Ident()(mx.nd.zeros((2,)))
    assert z._ag is None


def test_get_symbol_arguments_and_values():
    x, z = mx.nd.array([2.0]), mx.nd.array([5.0])
    x.attach_grad()
    z.attach_grad()
    with autograd.record():
        y = x * x + 2 * z - 1
    sym = autograd.get_symbol(y)
    assert sym.list_arguments() == ["var0", "var1"]
    exe = sym.bind(mx.cpu(), {"var0": x.copy(), "var1": z.copy()})
    assert exe.forward()[0].asnumpy().tolist() == [13.0]
    with pytest.raises(mx.MXNetError):
        autograd.get_symbol(mx.nd.ones((1,)))


def test_fresh_grad():
    x = mx.nd.ones((2,))
    x.attach_grad()
    assert x._fresh_grad is False
    with autograd.record():
        y = x * 2
    y.backward()
    assert x._fresh_grad is True
    x._fresh_grad = False
    assert x._fresh_grad is False


def test_star_import_names():
    ns = {}
    exec("from mxasync.autograd import *", ns)
    for name in ("record", "backward", "Function", "get_symbol", "NDArray", "Symbol", "array", "mark_variables"):
        assert name in ns, name


@pytest.mark.parametrize("key", [(slice(None, 2), Ellipsis, None, 0), (None,), (1, None, slice(None)), (None, 2, 1, 3)])
def test_recorded_indexing_with_new_axes(key):
    a = np.arange(48.0).reshape(4, 3, 4)
    x = mx.nd.array(a)
    x.attach_grad()
    with autograd.record():
        y = x[key]
    y.backward()
    want = np.zeros_like(a)
    want[key] = 1
    assert y.shape == (a[key].shape or (1,))
    np.testing.assert_array_equal(x.grad.asnumpy(), want)


def test_get_symbol_through_a_hybridized_block():
    """A hybridized call is one node on the tape; its symbol is the block's graph fed by the recorded inputs
    (it raised AttributeError: '_GraphNode' object has no attribute 'params')."""
    from mxasync.gluon import nn

    net = nn.HybridSequential()
    net.add(nn.Dense(4, activation="relu"), nn.Dense(3))
    net.initialize()
    net.hybridize()
    x = mx.nd.array(np.arange(10, dtype=np.float32).reshape(2, 5) / 10)
    x.attach_grad()
    with mx.autograd.record():
        y = net(x) * 2
    s = mx.autograd.get_symbol(y)
    params = [p.data() for p in net.collect_params().values()]
    assert len(s.list_arguments()) == 1 + len(params)
    out = s.eval(**dict(zip(s.list_arguments(), [x, *params], strict=True)))[0]
    np.testing.assert_allclose(out.asnumpy(), y.asnumpy(), rtol=1e-6)
