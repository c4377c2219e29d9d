"""mx.operator.CustomOp / CustomOpProp / register with mx.nd.Custom and mx.sym.Custom.

Values are checked against numpy; the gradients of a custom sigmoid against finite differences.
"""

import numpy as np
import pytest

import mxasync as mx


class _Sigmoid(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        x = in_data[0].asnumpy()
        self.assign(out_data[0], req[0], mx.nd.array(1.0 / (1.0 + np.exp(-x))))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        y = out_data[0].asnumpy()
        self.assign(in_grad[0], req[0], mx.nd.array(out_grad[0].asnumpy() * y * (1 - y)))


@mx.operator.register("test_sigmoid")
class _SigmoidProp(mx.operator.CustomOpProp):
    def __init__(self):
        super().__init__(need_top_grad=True)

    def create_operator(self, ctx, shapes, dtypes):
        return _Sigmoid()


class _ScaleAcc(mx.operator.CustomOp):
    """out = data * scale + bias; counts calls in an aux state."""

    def __init__(self, scale):
        self.scale = scale

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * self.scale + in_data[1])
        aux[0][:] = aux[0] + 1

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0] * self.scale)
        self.assign(in_grad[1], req[1], out_grad[0].sum(axis=0))


@mx.operator.register("test_scale_acc")
class _ScaleAccProp(mx.operator.CustomOpProp):
    def __init__(self, scale="1"):
        super().__init__(need_top_grad=True)
        self.scale = float(scale)  # MXNet passes every keyword as a string

    def list_arguments(self):
        return ["data", "bias"]

    def list_auxiliary_states(self):
        return ["count"]

    def infer_shape(self, in_shape):
        return [in_shape[0], [in_shape[0][1]]], [in_shape[0]], [[1]]

    def create_operator(self, ctx, shapes, dtypes):
        return _ScaleAcc(self.scale)


def test_public_face():
    assert {"CustomOp", "CustomOpProp", "register"} <= set(dir(mx.operator))
    assert "library" not in dir(mx.operator) and "registry" not in dir(mx.operator)


def test_imperative_forward_and_autograd_backward():
    x = np.array([-2.0, 0.0, 1.5, 3.0], dtype=np.float32)
    a = mx.nd.array(x)
    a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Custom(a, op_type="test_sigmoid")
    y.backward(mx.nd.ones(4) * 2)
    s = 1 / (1 + np.exp(-x))
    assert np.allclose(y.asnumpy(), s, atol=1e-6)
    eps = 1e-3
    num = ((1 / (1 + np.exp(-(x + eps)))) - (1 / (1 + np.exp(-(x - eps))))) / (2 * eps) * 2
    assert np.allclose(a.grad.asnumpy(), num, atol=1e-4)


def test_symbolic_with_params_aux_and_inference():
    data, bias = mx.sym.Variable("data"), mx.sym.Variable("bias")
    net = mx.sym.Custom(data=data, bias=bias, op_type="test_scale_acc", scale=3, name="sa")
    assert net.list_arguments() == ["data", "bias"]
    assert net.list_auxiliary_states() == ["sa_count"]
    assert net.infer_shape(data=(2, 3)) == ([(2, 3), (3,)], [(2, 3)], [(1,)])
    assert net.infer_type(data=np.float64)[1] == [np.float64]
    exe = net.simple_bind(mx.cpu(), data=(2, 3))
    d = np.arange(6, dtype=np.float32).reshape(2, 3)
    exe.arg_dict["data"][:] = d
    exe.arg_dict["bias"][:] = np.array([1, 2, 3], np.float32)
    exe.aux_dict["sa_count"][:] = 0
    out = exe.forward(is_train=True)[0].asnumpy()
    assert np.allclose(out, d * 3 + [1, 2, 3])
    exe.backward(mx.nd.ones((2, 3)))
    assert np.allclose(exe.grad_dict["data"].asnumpy(), 3)
    assert np.allclose(exe.grad_dict["bias"].asnumpy(), 2)
    exe.forward()
    assert exe.aux_dict["sa_count"].asnumpy()[0] == 2
    # the params survive symbol JSON (as MXNet's strings)
    again = mx.sym.load_json(net.tojson())
    assert again.list_attr()["scale"] == "3" and again.list_attr()["op_type"] == "test_scale_acc"


def test_need_top_grad_false_drops_out_grad_dependency():
    prop = mx.operator.CustomOpProp(need_top_grad=False)
    assert prop.declare_backward_dependency([1], [2], [3]) == [2, 3]
    assert mx.operator.CustomOpProp().declare_backward_dependency([1], [2], [3]) == [1, 2, 3]


def test_unknown_op_type_and_bad_registration():
    with pytest.raises(mx.MXNetError, match="not registered"):
        mx.nd.Custom(mx.nd.ones(2), op_type="no_such_custom_op")
    with pytest.raises(mx.MXNetError):
        mx.operator.register("bad")(object)


class _Probe(mx.operator.CustomOp):
    """Pushes its own ops: they show in the profiler under the custom op's scope."""

    def forward(self, is_train, req, in_data, out_data, aux):
        mx.nd.zeros((3, 3))
        self.assign(out_data[0], req[0], in_data[0] + 1)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0] * 2)


@mx.operator.register("test_profiled")
class _ProbeProp(mx.operator.CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):
        return _Probe()


def test_ops_pushed_inside_a_custom_op_are_profiled_in_its_scope(tmp_path):
    import json

    mx.profiler.set_config(filename=str(tmp_path / "trace.json"), aggregate_stats=True)
    mx.profiler.dumps(reset=True)
    mx.profiler.set_state("run")
    try:
        x = mx.nd.array([1.0, 2.0])
        x.attach_grad()
        with mx.autograd.record():
            y = mx.nd.Custom(x, op_type="test_profiled")
        y.backward()
        mx.nd.waitall()
        stats = json.loads(mx.profiler.dumps(format="json"))["Time"]
    finally:
        mx.profiler.set_state("stop")
        mx.profiler.set_config()
        mx.profiler.dumps(reset=True)
    assert np.allclose(y.asnumpy(), [2.0, 3.0]) and np.allclose(x.grad.asnumpy(), [2.0, 2.0])
    custom = set(stats["Custom Operator"])
    assert {"test_profiled::pure_python", "test_profiled::_zeros", "test_profiled::_plus_scalar",
            "_backward_test_profiled::pure_python", "_backward_test_profiled::_mul_scalar"} <= custom, custom
    assert "Custom" in stats["operator"]  # the custom op itself was pushed by the caller, outside any scope


class _AddTwice(mx.operator.CustomOp):
    """out = a + 2 b, pushing ops of its own on NDArrays (the engine must not be held meanwhile)."""

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] + 2 * in_data[1])

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0])
        self.assign(in_grad[1], req[1], 2 * out_grad[0])


@mx.operator.register("test_add_twice")
class _AddTwiceProp(mx.operator.CustomOpProp):
    def __init__(self):
        super().__init__(need_top_grad=True)

    def list_arguments(self):
        return ["a", "b"]

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]], []

    def create_operator(self, ctx, shapes, dtypes):
        return _AddTwice()


def test_inputs_by_position_or_by_the_operators_names():
    """MXNet's Custom(*data, op_type=...): inputs by position, or by the names list_arguments() gives."""
    a, b = mx.nd.array([1.0, 2.0]), mx.nd.array([3.0, 5.0])
    want = np.array([7.0, 12.0])
    np.testing.assert_allclose(mx.nd.Custom(a, b, op_type="test_add_twice").asnumpy(), want)
    np.testing.assert_allclose(mx.nd.Custom(a, b=b, op_type="test_add_twice").asnumpy(), want)
    np.testing.assert_allclose(mx.nd.Custom(b=b, a=a, op_type="test_add_twice").asnumpy(), want)
    with pytest.raises(mx.MXNetError, match=r"Custom\[test_add_twice\].*unknown input 'c'; inputs are \['a', 'b'\]"):
        mx.nd.Custom(a, c=b, op_type="test_add_twice")
    a.attach_grad()
    b.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Custom(a, b, op_type="test_add_twice")
    y.backward(mx.nd.array([1.0, 10.0]))
    np.testing.assert_allclose(a.grad.asnumpy(), [1.0, 10.0])
    np.testing.assert_allclose(b.grad.asnumpy(), [2.0, 20.0])
    s = mx.sym.Custom(mx.sym.var("x"), mx.sym.var("y"), op_type="test_add_twice", name="c")
    assert s.list_arguments() == ["x", "y"]
    out = s.eval(x=mx.nd.array([1.0, 2.0]), y=mx.nd.array([3.0, 5.0]))[0]
    np.testing.assert_allclose(out.asnumpy(), want)
