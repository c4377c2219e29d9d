"""The smaller ops of issue 24 against MXNet 1.9.1 (fixtures by fixtures_misc_ops/make_fixtures.py):
IdentityAttachKLSparseReg (its penalty gradient and the aux state backward updates), BatchNormWithReLU in
training, getnnz / edge_id on CSR matrices, RROIAlign, hawkesll, _onehot_encode; and ccSGD / Test, MXNet's leftover optimizers."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import mxasync as mx

REF = np.load(Path(__file__).parent / "fixtures_misc_ops" / "mxnet_ref.npz")


def test_kl_sparse_reg_matches_mxnet():
    s = mx.sym.IdentityAttachKLSparseReg(mx.sym.var("data"), sparseness_target=0.2, penalty=0.01, momentum=0.8)
    ex = s.simple_bind(mx.cpu(), data=REF["kl/data"].shape)
    ex.arg_dict["data"][:] = REF["kl/data"]
    aux = ex.aux_dict[s.list_auxiliary_states()[0]]
    aux[:] = 0.4
    ex.forward(is_train=True)
    ex.backward(mx.nd.array(REF["kl/head"]))
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), REF["kl/out"], rtol=1e-6)
    np.testing.assert_allclose(ex.grad_dict["data"].asnumpy(), REF["kl/grad"], rtol=1e-5)
    np.testing.assert_allclose(aux.asnumpy(), REF["kl/moving_avg"], rtol=1e-6)


def test_batch_norm_with_relu_matches_mxnet():
    xs = [mx.nd.array(REF[f"bnrelu/{n}"]) for n in ("data", "gamma", "beta")]
    aux = [mx.nd.array(REF["bnrelu/mm"]), mx.nd.array(REF["bnrelu/mv"])]
    for a in xs:
        a.attach_grad()
    with mx.autograd.record(train_mode=True):
        out = mx.nd.contrib.BatchNormWithReLU(*xs, *aux, fix_gamma=False, momentum=0.7, eps=1e-4)
    out.backward(mx.nd.array(REF["bnrelu/head"]))
    np.testing.assert_allclose(out.asnumpy(), REF["bnrelu/out"], rtol=1e-4, atol=1e-5)
    for name, a in zip(("data", "gamma", "beta"), xs, strict=True):
        np.testing.assert_allclose(a.grad.asnumpy(), REF[f"bnrelu/grad_{name}"], rtol=1e-4, atol=1e-4,
                                   err_msg=f"grad of {name}")
    np.testing.assert_allclose(aux[0].asnumpy(), REF["bnrelu/mm_after"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(aux[1].asnumpy(), REF["bnrelu/mv_after"], rtol=1e-5, atol=1e-6)


def test_csr_graph_ops_match_mxnet():
    csr = mx.nd.array(REF["csr/dense"]).tostype("csr")
    np.testing.assert_array_equal(mx.nd.contrib.getnnz(csr).asnumpy(), REF["csr/nnz"])
    np.testing.assert_array_equal(mx.nd.contrib.getnnz(csr, axis=1).asnumpy(), REF["csr/nnz_rows"])
    got = mx.nd.contrib.edge_id(csr, mx.nd.array(REF["csr/u"]), mx.nd.array(REF["csr/v"]))
    np.testing.assert_allclose(got.asnumpy(), REF["csr/edge_id"])


def test_rroi_align_matches_mxnet():
    data, rois = mx.nd.array(REF["rroi/data"]), mx.nd.array(REF["rroi/rois"])
    a = mx.nd.contrib.RROIAlign(data, rois, pooled_size=(2, 3), spatial_scale=1.0)
    b = mx.nd.contrib.RROIAlign(data, rois, pooled_size=(3, 2), spatial_scale=0.5, sampling_ratio=2)
    np.testing.assert_allclose(a.asnumpy(), REF["rroi/out_a"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b.asnumpy(), REF["rroi/out_b"], rtol=1e-5, atol=1e-6)


def test_hawkesll_matches_mxnet():
    names = ("lda", "alpha", "beta", "state", "lags", "marks", "valid_length", "max_time")
    xs = {n: mx.nd.array(REF[f"hawkes/{n}"], dtype=REF[f"hawkes/{n}"].dtype) for n in names}
    for n in ("lda", "alpha", "beta"):
        xs[n].attach_grad()
    with mx.autograd.record():
        ll, mem = mx.nd.contrib.hawkesll(*xs.values())
    ll.backward(mx.nd.array(REF["hawkes/head"]))
    np.testing.assert_allclose(ll.asnumpy(), REF["hawkes/ll"], rtol=1e-5)
    np.testing.assert_allclose(mem.asnumpy(), REF["hawkes/out_state"], rtol=1e-5, atol=1e-7)
    for n in ("lda", "alpha", "beta"):
        np.testing.assert_allclose(xs[n].grad.asnumpy(), REF[f"hawkes/grad_{n}"], rtol=1e-4, atol=1e-5,
                                   err_msg=f"grad of {n}")


def test_onehot_encode_matches_mxnet():
    out = mx.nd._internal._onehot_encode(mx.nd.array(REF["onehot/indices"]), mx.nd.zeros((3, 4)))
    np.testing.assert_array_equal(out.asnumpy(), REF["onehot/out"])


def test_leftover_optimizers():
    w, g = mx.nd.ones((3,)), mx.nd.ones((3,)) * 2
    mx.optimizer.create("ccsgd", learning_rate=0.5).update(0, w, g, None)
    np.testing.assert_allclose(w.asnumpy(), 0.0)
    opt = mx.optimizer.Test(rescale_grad=0.25)
    state = opt.create_state(0, w)
    opt.update(0, w, g, state)
    np.testing.assert_allclose(w.asnumpy(), 0.5)
    np.testing.assert_allclose(state.asnumpy(), 0.5)
