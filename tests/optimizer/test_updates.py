"""Each optimizer's update against numpy formulas and against MXNet 1.9.1's values (fixtures)."""

from __future__ import annotations

import json
import os

import numpy as np
import optim_reference as ref
import pytest

import mxasync as mx
from mxasync import optimizer as opt_mod

FIXTURES = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "optimizers.npz"))
MX_CASES = sorted({k.split("/")[0] for k in FIXTURES.files})

# (name, our kwargs, numpy reference, reference kwargs); the reference's t is passed when it takes one
NUMPY_CASES = [
    ("sgd", dict(learning_rate=0.1), ref.sgd, dict(lr=0.1)),
    ("sgd", dict(learning_rate=0.1, momentum=0.9, wd=0.01, clip_gradient=0.3, rescale_grad=0.5), ref.sgd,
     dict(lr=0.1, momentum=0.9, wd=0.01, clip=0.3, rescale=0.5)),
    ("nag", dict(learning_rate=0.1, momentum=0.8, wd=0.02), ref.nag, dict(lr=0.1, momentum=0.8, wd=0.02)),
    ("nag", dict(learning_rate=0.1, wd=0.02), ref.nag, dict(lr=0.1, wd=0.02)),
    ("adam", dict(learning_rate=0.01, wd=0.05, clip_gradient=0.7), ref.adam, dict(lr=0.01, wd=0.05, clip=0.7)),
    ("adagrad", dict(learning_rate=0.1, wd=0.01, rescale_grad=2.0), ref.adagrad, dict(lr=0.1, wd=0.01, rescale=2.0)),
    ("rmsprop", dict(learning_rate=0.01, gamma1=0.8, clip_weights=0.9), ref.rmsprop,
     dict(lr=0.01, gamma1=0.8, clip_weights=0.9)),
    ("rmsprop", dict(learning_rate=0.01, centered=True, gamma2=0.7, clip_gradient=1.0), ref.rmsprop_centered,
     dict(lr=0.01, gamma2=0.7, clip=1.0)),
]


@pytest.mark.parametrize("name,kwargs,fn,rkw", NUMPY_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(NUMPY_CASES)])
def test_update_matches_numpy(name, kwargs, fn, rkw):
    rng = np.random.default_rng(3)
    w_np = rng.uniform(-1, 1, (4, 5))
    opt = opt_mod.create(name, **kwargs)
    updater = opt_mod.get_updater(opt)
    weight = mx.nd.array(w_np, dtype="float64")
    state: dict = {}
    for t in range(1, 5):
        g = rng.uniform(-2, 2, (4, 5))
        updater(0, mx.nd.array(g, dtype="float64"), weight)
        w_np = fn(w_np, g, state, t=t, **rkw) if fn is ref.adam else fn(w_np, g, state, **rkw)
    np.testing.assert_allclose(weight.asnumpy(), w_np, rtol=1e-10, atol=1e-12)
    assert opt.num_update == 4


@pytest.mark.parametrize("case", MX_CASES)
def test_update_matches_mxnet(case):
    name, kwargs, dtype = json.loads(str(FIXTURES[f"{case}/config"]))
    opt = opt_mod.create(name, **kwargs)
    updater = opt_mod.get_updater(opt)
    weight = mx.nd.array(FIXTURES[f"{case}/w0"], dtype=dtype)
    step = 0
    while f"{case}/g{step}" in FIXTURES:
        updater(0, mx.nd.array(FIXTURES[f"{case}/g{step}"], dtype=dtype), weight)
        step += 1
        tol = dict(rtol=1e-3, atol=1e-3) if dtype == "float16" else dict(rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(weight.asnumpy(), FIXTURES[f"{case}/w{step}"], err_msg=f"{case} step {step}", **tol)
    assert weight.dtype == np.dtype(dtype)
