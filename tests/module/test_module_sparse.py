"""Module with sparse parameters (MXNet's test_module.py: test_module_initializer, the factorization
machine) and the executor group's shared input arrays (test_executor_group)."""

from __future__ import annotations

import numpy as np

import mxasync as mx
from mxasync.module.executor_group import DataParallelExecutorGroup


def _linear_csr_module(m: int = 20, n: int = 16):
    x = mx.sym.var("data", stype="csr")
    v = mx.sym.var("v", shape=(m, 1), init=mx.init.Uniform(scale=0.1), stype="row_sparse")
    out = mx.sym.LinearRegressionOutput(mx.sym.dot(x, v), mx.sym.var("label"), name="out")
    data = mx.nd.array(np.eye(n, m, dtype=np.float32)).tostype("csr")
    it = mx.io.NDArrayIter(data=data, label={"label": mx.nd.ones((n, 1))}, batch_size=n,
                           last_batch_handle="discard")
    mod = mx.mod.Module(out, data_names=["data"], label_names=["label"])
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    return mod, it


def test_init_params_keeps_a_row_sparse_parameter_sparse():
    mod, _ = _linear_csr_module()
    mod.init_params()
    v = mod._arg_params["v"]
    assert v.stype == "row_sparse"
    assert np.abs(v.asnumpy()).sum() > 0
    np.testing.assert_array_equal(mod._exec_group.execs[0].arg_dict["v"].asnumpy(), v.asnumpy())
    mx.nd.waitall()  # no copy into the sparse arrays failed on the engine


def test_training_a_row_sparse_parameter_through_module():
    mod, it = _linear_csr_module()
    mod.init_params()
    mod.init_optimizer(optimizer=mx.optimizer.SGD(learning_rate=0.5, momentum=0.1, rescale_grad=1 / 16))
    before = mod.get_params()[0]["v"].asnumpy().copy()
    for batch in it:
        mod.forward(batch, is_train=True)
        mod.backward()
        mod.update()
    after = mod.get_params()[0]["v"]
    assert after.stype == "row_sparse"
    assert not np.allclose(after.asnumpy()[:16], before[:16])  # the rows the data uses moved
    np.testing.assert_array_equal(after.asnumpy()[16:], before[16:])  # the others did not (lazy update)


def test_dense_copyto_into_a_sparse_array_casts():
    dst = mx.nd.sparse.zeros("row_sparse", (3, 2))
    mx.nd.array([[0, 0], [1, 2], [0, 0]]).copyto(dst)
    assert dst.stype == "row_sparse" and dst.indices.asnumpy().tolist() == [1]
    np.testing.assert_array_equal(dst.asnumpy(), [[0, 0], [1, 2], [0, 0]])


def test_executor_groups_share_their_input_arrays_and_record_grad_req():
    def net(layers):
        h = mx.sym.var("data")
        for i in range(layers):
            h = mx.sym.FullyConnected(h, num_hidden=4, name=f"fc{i}")
        return mx.sym.SoftmaxOutput(h, mx.sym.var("softmax_label"), name="softmax")

    shapes, labels = [("data", (6, 5))], [("softmax_label", (6,))]
    small = net(1)
    params = [n for n in small.list_arguments() if n not in ("data", "softmax_label")]
    ctxs = [mx.cpu(0), mx.cpu(1)]
    g1 = DataParallelExecutorGroup(small, ctxs, None, shapes, labels, params, True, False)
    assert [sorted(d) for d in g1.shared_data_arrays] == [["data", "softmax_label"]] * 2
    assert g1.grad_req == {"data": "null", "fc0_weight": "write", "fc0_bias": "write", "softmax_label": "null"}
    g2 = DataParallelExecutorGroup(net(2), ctxs, None, shapes, labels, params, True, False, shared_group=g1)
    assert g2.shared_data_arrays is g1.shared_data_arrays
    assert sorted(g1.shared_data_arrays[0]) == ["data", "fc1_bias", "fc1_weight", "softmax_label"]
    for k in range(2):
        assert g2.execs[k].arg_dict["data"] is g1.shared_data_arrays[k]["data"]
        assert g2.execs[k].arg_dict["fc0_weight"] is g1.execs[k].arg_dict["fc0_weight"]
