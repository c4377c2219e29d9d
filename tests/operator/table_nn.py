"""Table rows: dense, convolution, pooling, activations, normalisation, outputs, random and updates."""

from __future__ import annotations

import numpy as np
import reference_nn as ref
from cases import Case, away, integers, uniform


def _fc(x, w, b=None, num_hidden=None, no_bias=False, flatten=True):
    x2 = x.reshape(x.shape[0], -1) if flatten else x
    y = x2 @ w.T
    return y + b if b is not None else y


def _act(kind):
    return {"relu": lambda x: np.maximum(x, 0), "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "tanh": np.tanh,
            "softrelu": lambda x: np.log1p(np.exp(x)), "softsign": lambda x: x / (1 + np.abs(x))}[kind]


def _aux_bn(rng, shapes, dtype):
    c = shapes[0][1]
    return [rng.uniform(-0.5, 0.5, c).astype(dtype), rng.uniform(0.5, 1.5, c).astype(dtype)]


def _check_random(kind):
    def check(outs, inputs, params):
        o = outs[0]
        assert o.shape == tuple(params["shape"])
        if kind == "uniform":
            assert params["low"] <= o.min() and o.max() < params["high"]
        elif kind == "randint":
            assert o.dtype == np.int32 and params["low"] <= o.min() and o.max() < params["high"]
        else:
            assert abs(o.mean() - params["loc"]) < 0.2
    return check


def _check_mean(mean, tol, per_row=False):
    """Sampler rows: the right shape and sample means near the distribution's mean."""
    def check(outs, inputs, params):
        o = outs[0].astype(np.float64)
        assert np.isfinite(o).all()
        if per_row:
            np.testing.assert_allclose(o.reshape(len(mean), -1).mean(axis=1), mean, atol=tol)
        else:
            assert abs(o.mean() - mean) < tol, (o.mean(), mean)
    return check


def _fixed(values):
    """Inputs with given values (distribution parameters), whatever the dtype."""
    return lambda rng, shape, dtype: np.broadcast_to(np.asarray(values, dtype=dtype), shape).copy()


# distribution, scalar params, mean, tolerance of the mean of 4000 draws
_SCALAR_DISTS = [
    ("exponential", dict(lam=2.0), 0.5, 0.05),
    ("gamma", dict(alpha=2.0, beta=3.0), 6.0, 0.4),
    ("poisson", dict(lam=4.0), 4.0, 0.2),
    ("negative_binomial", dict(k=3.0, p=0.4), 4.5, 0.4),
    ("generalized_negative_binomial", dict(mu=2.0, alpha=0.5), 2.0, 0.2),
]
# distribution, per-row parameter values (rows 0 and 1), per-row means, tolerance
_SAMPLE_DISTS = [
    ("uniform", dict(low=[0, 10], high=[1, 11]), [0.5, 10.5], 0.05),
    ("normal", dict(mu=[0, 10], sigma=[1, 2]), [0.0, 10.0], 0.15),
    ("exponential", dict(lam=[1, 4]), [1.0, 0.25], 0.08),
    ("gamma", dict(alpha=[1, 5], beta=[1, 1]), [1.0, 5.0], 0.2),
    ("poisson", dict(lam=[1, 6]), [1.0, 6.0], 0.25),
    ("negative_binomial", dict(k=[2, 4], p=[0.5, 0.5]), [2.0, 4.0], 0.3),
    ("generalized_negative_binomial", dict(mu=[1, 3], alpha=[0.5, 0.5]), [1.0, 3.0], 0.25),
]


def _sgd(w, g, lr, wd=0.0):
    return w - lr * (g + wd * w)


def _sgd_mom(w, g, m, lr, momentum):
    m2 = momentum * m - lr * g
    return w + m2


def _adam(w, g, mean, var, lr, beta1=0.9, beta2=0.999, epsilon=1e-8):
    m2 = beta1 * mean + (1 - beta1) * g
    v2 = beta2 * var + (1 - beta2) * g * g
    return w - lr * m2 / (np.sqrt(v2) + epsilon)


def _rmsprop(w, g, n, lr, gamma1=0.95, epsilon=1e-8):
    n2 = gamma1 * n + (1 - gamma1) * g * g
    return w - lr * g / np.sqrt(n2 + epsilon)


def _nag(w, g, m, lr, momentum, wd=0.0):
    step = lr * (g + wd * w)
    m2 = momentum * m
    return w + momentum * (m2 - step) - step


def _adagrad(w, g, h, lr, epsilon=1e-7, wd=0.0):
    h2 = h + g * g
    return w - lr * (g / np.sqrt(h2 + epsilon) + wd * w)


def _rmspropalex(w, g, n, gbar, delta, lr, gamma1=0.95, gamma2=0.9, epsilon=1e-8):
    n2 = gamma1 * n + (1 - gamma1) * g * g
    g2 = gamma1 * gbar + (1 - gamma1) * g
    return w + gamma2 * delta - lr * g / np.sqrt(n2 - g2 * g2 + epsilon)


def _via_single(op, per):
    """Reference for a multi_* update: the single-weight ``op`` run on each weight in turn."""
    from harness import forward

    def run(*xs, lrs, wds, num_weights, **kw):
        return [forward(op, dict(kw, lr=lrs[i], wd=wds[i]), list(xs[per * i: per * (i + 1)]))[0]
                for i in range(num_weights)]
    return run


def _smooth_l1(x, scalar):
    s2 = scalar * scalar
    return np.where(np.abs(x) < 1 / s2, 0.5 * s2 * x * x, np.abs(x) - 0.5 / s2)


def _softmax_output(d, lab, **kw):
    return ref.softmax(d, axis=-1)


CONV = dict(kernel=(3, 3), num_filter=4)
def _relu_first(outs):
    """relu of the first output (BatchNormWithReLU), the others unchanged."""
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    return tuple([np.maximum(outs[0], 0)] + outs[1:]) if len(outs) > 1 else np.maximum(outs[0], 0)


CASES = [
    Case("FullyConnected", [((2, 5), (3, 5), (3,)), ((2, 2, 2), (3, 4), (3,))], ref=_fc, params=dict(num_hidden=3)),
    Case("FullyConnected", [((2, 5), (3, 5))], ref=_fc, params=dict(num_hidden=3, no_bias=True), name="fc-nobias"),
    Case("FullyConnected", [((2, 2, 5), (3, 5), (3,))], ref=_fc, params=dict(num_hidden=3, flatten=False),
         name="fc-noflatten"),
    Case("dot", [((2, 3), (3, 4)), ((3,), (3,))], ref=np.dot if False else (lambda a, b: np.atleast_1d(np.dot(a, b)))),
    Case("dot", [((3, 2), (4, 3))], ref=lambda a, b, transpose_a, transpose_b: a.T @ b.T,
         params=dict(transpose_a=True, transpose_b=True), name="dot-tt"),
    Case("batch_dot", [((2, 2, 3), (2, 3, 4))], ref=lambda a, b: a @ b),
    Case("batch_dot", [((2, 3, 2), (2, 3, 4))], ref=lambda a, b, transpose_a: a.transpose(0, 2, 1) @ b,
         params=dict(transpose_a=True), name="batch_dot-ta"),
    Case("Convolution", [((2, 2, 5, 5), (4, 2, 3, 3), (4,))], ref=ref.conv, params=CONV),
    Case("Convolution", [((1, 4, 6, 5), (4, 2, 3, 3), (4,))], ref=ref.conv, name="conv-stride-pad-group",
         params=dict(CONV, stride=(2, 1), pad=(1, 1), num_group=2)),
    Case("Convolution", [((1, 2, 7), (3, 2, 3))], ref=ref.conv, name="conv1d-dilate",
         params=dict(kernel=(3,), num_filter=3, dilate=(2,), no_bias=True)),
    Case("Deconvolution", [((1, 2, 3, 3), (2, 3, 3, 3))], ref=ref.deconv, params=dict(kernel=(3, 3), num_filter=3)),
    Case("Deconvolution", [((1, 2, 3, 3), (2, 3, 2, 2), (3,))], ref=ref.deconv, name="deconv-stride",
         params=dict(kernel=(2, 2), num_filter=3, stride=(2, 2), pad=(1, 1), adj=(1, 1), no_bias=False)),
    Case("Pooling", [((2, 2, 4, 4),)], ref=ref.pool, params=dict(kernel=(2, 2), stride=(2, 2)), gens=uniform()),
    Case("Pooling", [((1, 2, 5, 5),)], ref=ref.pool, params=dict(kernel=(3, 3), stride=(2, 2), pool_type="avg",
                                                                  pad=(1, 1)), name="pool-avg-pad"),
    Case("Pooling", [((1, 2, 5, 5),)], ref=ref.pool, name="pool-sum-full",
         params=dict(kernel=(2, 2), stride=(2, 2), pool_type="sum", pooling_convention="full")),
    Case("Pooling", [((2, 3, 4, 4),)], ref=ref.pool, params=dict(global_pool=True, pool_type="avg"),
         name="pool-global"),
    *[Case("Activation", [((2, 3),)], ref=lambda x, act_type: _act(act_type)(x), params=dict(act_type=k),
           gens=away(), name=f"Activation-{k}") for k in ("relu", "sigmoid", "tanh", "softrelu", "softsign")],
    Case("LeakyReLU", [((2, 3),)], ref=lambda x, act_type, slope: np.where(x > 0, x, slope * x),
         params=dict(act_type="leaky", slope=0.1), gens=away()),
    Case("LeakyReLU", [((2, 3),)], ref=lambda x, act_type, slope: np.where(x > 0, x, slope * np.expm1(x)),
         params=dict(act_type="elu", slope=0.5), gens=away(), name="elu"),
    Case("LeakyReLU", [((2, 3, 2), (3,))], ref=lambda x, g, act_type: np.where(x > 0, x, g.reshape(1, 3, 1) * x),
         params=dict(act_type="prelu"), gens=[away(), uniform(0.1, 0.5)], name="prelu"),
    Case("softmax", [((2, 3),), ((2, 3, 4),)], ref=lambda x, axis=-1: ref.softmax(x, axis)),
    Case("softmax", [((2, 3),)], ref=lambda x, axis: ref.softmax(x, axis), params=dict(axis=0), name="softmax-0"),
    Case("log_softmax", [((2, 3),)], ref=lambda x: np.log(ref.softmax(x))),
    Case("LRN", [((1, 5, 2, 2),)], ref=ref.lrn, params=dict(nsize=3, alpha=0.1)),
    Case("BatchNorm", [((4, 3, 2), (3,), (3,))], ref=lambda x, g, b, mm, mv, **kw: ref.batchnorm(x, g, b, mm, mv, **kw),
         params=dict(fix_gamma=False), aux=_aux_bn, is_train=True, gens=[uniform(), uniform(0.5, 1.5), uniform()],
         name="BatchNorm-train"),
    Case("BatchNorm", [((4, 3), (3,), (3,))], name="BatchNorm-test",
         ref=lambda x, g, b, mm, mv, **kw: ref.batchnorm(x, g, b, mm, mv, train=False, **kw),
         params=dict(fix_gamma=True), aux=_aux_bn, gens=[uniform(), uniform(0.5, 1.5), uniform()]),
    Case("_contrib_BatchNormWithReLU", [((4, 3, 2), (3,), (3,))], aux=_aux_bn, is_train=True,
         ref=lambda x, g, b, mm, mv, **kw: _relu_first(ref.batchnorm(x, g, b, mm, mv, **kw)),
         params=dict(fix_gamma=False), gens=[uniform(), uniform(0.5, 1.5), uniform()]),
    # its gradient is a sparseness penalty's, not the identity's: pinned against MXNet in test_misc_ops.py
    Case("IdentityAttachKLSparseReg", [((4, 3),)], ref=lambda x, mv, **kw: x, grad=False,
         aux=lambda rng, shapes, dtype: [rng.uniform(0.2, 0.8, (shapes[0][1],)).astype(dtype)]),
    Case("Dropout", [((3, 4),)], ref=lambda x, p: x, params=dict(p=0.5), grad=False),
    Case("SoftmaxOutput", [((3, 4), (3,))], ref=_softmax_output, gens=[uniform(), integers(0, 4)], grad=False),
    Case("LinearRegressionOutput", [((3, 2), (3, 2))], ref=lambda d, lab: d, grad=False),
    Case("MAERegressionOutput", [((3, 2), (3, 2))], ref=lambda d, lab: d, grad=False),
    Case("LogisticRegressionOutput", [((3, 2), (3, 2))], ref=lambda d, lab: 1 / (1 + np.exp(-d)), grad=False),
    Case("MakeLoss", [((2, 3),)], ref=lambda x: x, grad=False),
    Case("BlockGrad", [((2, 3),)], ref=lambda x: x, grad="zero"),
    Case("ElementWiseSum", [((2, 3), (2, 3), (2, 3))], ref=lambda *xs, num_args: sum(xs), params=dict(num_args=3)),
    Case("_random_uniform", [()], params=dict(low=-1.0, high=2.0, shape=(50,)), check=_check_random("uniform")),
    Case("_random_normal", [()], params=dict(loc=1.0, scale=0.5, shape=(200,)), check=_check_random("normal")),
    Case("_random_randint", [()], params=dict(low=2, high=9, shape=(50,)), check=_check_random("randint")),
    Case("sgd_update", [((3,), (3,))], ref=_sgd, params=dict(lr=0.1, wd=0.01), grad=False),
    Case("sgd_mom_update", [((3,), (3,), (3,))], ref=_sgd_mom, params=dict(lr=0.1, momentum=0.9), grad=False),
    Case("adam_update", [((3,), (3,), (3,), (3,))], ref=_adam, params=dict(lr=0.1),
         gens=[uniform(), uniform(), uniform(), uniform(0.1, 1)], grad=False),
    Case("rmsprop_update", [((3,), (3,), (3,))], ref=_rmsprop, params=dict(lr=0.1),
         gens=[uniform(), uniform(), uniform(0.1, 1)], grad=False),
    Case("nag_mom_update", [((3,), (3,), (3,))], ref=_nag, params=dict(lr=0.1, momentum=0.9, wd=0.01), grad=False),
    Case("_sparse_adagrad_update", [((3,), (3,), (3,))], ref=_adagrad, params=dict(lr=0.1, wd=0.01),
         gens=[uniform(), uniform(), uniform(0.1, 1)], grad=False),
    Case("rmspropalex_update", [((3,), (3,), (3,), (3,), (3,))], ref=_rmspropalex, params=dict(lr=0.1),
         gens=[uniform(), uniform(), uniform(1, 2), uniform(-0.5, 0.5), uniform()], grad=False),
    Case("multi_sgd_update", [((3,), (3,), (2, 2), (2, 2))], ref=_via_single("sgd_update", 2), grad=False,
         params=dict(lrs=(0.1, 0.2), wds=(0.01, 0.0), num_weights=2, rescale_grad=0.5)),
    Case("multi_sgd_update", [((3,), (3,), (2,), (2,), (4,), (4,))], ref=_via_single("sgd_update", 2), grad=False,
         params=dict(lrs=(0.1, 0.2, 0.3), wds=(0.0, 0.01, 0.1), num_weights=3, clip_gradient=0.4),
         name="multi_sgd_update-clip"),
    Case("multi_sgd_mom_update", [((3,), (3,), (3,), (2, 2), (2, 2), (2, 2))], ref=_via_single("sgd_mom_update", 3),
         params=dict(lrs=(0.1, 0.2), wds=(0.01, 0.0), momentum=0.9, num_weights=2, rescale_grad=0.5), grad=False),
    Case("multi_sgd_mom_update", [((4,), (4,), (4,))], ref=_via_single("sgd_mom_update", 3), grad=False,
         params=dict(lrs=(0.1,), wds=(0.02,), momentum=0.8, num_weights=1, clip_gradient=0.3),
         name="multi_sgd_mom_update-clip-one"),
    Case("smooth_l1", [((2, 5),)], ref=_smooth_l1, params=dict(scalar=1.5), gens=away(-2, 2, 0.05)),
    *[Case(f"_random_{d}", [()], params=dict(shape=(4000,), **p), check=_check_mean(m, tol))
      for d, p, m, tol in _SCALAR_DISTS],
    *[Case(f"_sample_{d}", [((2,),) * len(p)], params=dict(shape=(3000,)), gens=[_fixed(v) for v in p.values()],
           grad=False, check=_check_mean(m, tol, per_row=True)) for d, p, m, tol in _SAMPLE_DISTS],
    Case("_sample_multinomial", [((2, 3),)], params=dict(shape=(4000,)), gens=_fixed([[0.2, 0.3, 0.5], [1, 0, 0]]),
         grad=False, check=_check_mean([1.3, 0.0], 0.1, per_row=True)),
]
