"""Replay outputs and gradients recorded from the real MXNet 1.9.1 (see fixtures/make_fixtures.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mxasync.operator.kernels import activation as k_activation
from mxasync.operator.kernels import batch_norm as k_batch_norm
from mxasync.operator.kernels import fully_connected as k_fully_connected
from mxasync.operator.kernels import lrn as k_lrn
from mxasync.operator.kernels import optimizer as k_optimizer
from mxasync.operator.kernels import output as k_output
from mxasync.operator.kernels import pooling as k_pooling
from mxasync.operator.kernels import softmax as k_softmax
from mxasync.operator.kernels.conv import convolution as k_convolution
from mxasync.operator.kernels.conv import deconvolution as k_deconvolution

FIXTURES = [Path(__file__).parent / "fixtures" / n for n in ("mxnet_ref.npz", "mxnet_ref_native.npz")]
RTOL, ATOL = 1e-4, 1e-3  # float32, MXNet's assert_almost_equal defaults
# Where MXNet 1.9.1 is wrong and we are right on purpose: (case, array) -> why.
KNOWN_DIFFERENCES = {
    ("leaky_selu", "grad_data"): "MXNet's selu gradient is lambda*(out+alpha) for x<0; d/dx is out+lambda*alpha",
}


def _load() -> dict[str, dict]:
    cases: dict[str, dict] = {}
    for path in FIXTURES:
        with np.load(path) as z:
            for key in z.files:
                case, name = key.split("/", 1)
                cases.setdefault(case, {})[name] = z[key]
    for arrays in cases.values():
        arrays["params"] = json.loads(str(arrays["params"]))
    return cases


CASES = _load()


def _conv(a, p):
    out = k_convolution.convolution(np, a["data"], a["weight"], a["bias"], **p)
    dx, dw, db = k_convolution.convolution_backward(np, a["head"], a["data"], a["weight"], **p)
    return dict(out=out, grad_data=dx, grad_weight=dw, grad_bias=db)


def _deconv(a, p):
    out = k_deconvolution.deconvolution(np, a["data"], a["weight"], a["bias"], **p)
    dx, dw, db = k_deconvolution.deconvolution_backward(np, a["head"], a["data"], a["weight"], **p)
    return dict(out=out, grad_data=dx, grad_weight=dw, grad_bias=db)


def _pool(a, p):
    return dict(out=k_pooling.pooling(np, a["data"], **p), grad_data=k_pooling.pooling_backward(np, a["head"], a["data"], **p))


def _bn(a, p):
    kw = dict(fix_gamma=p["fix_gamma"], use_global_stats=p.get("use_global_stats", False), axis=p.get("axis", 1))
    out, mean, invstd = k_batch_norm.batch_norm(
        np, a["data"], a["gamma"], a["beta"], a["moving_mean"], a["moving_var"], eps=p["eps"], **kw
    )
    dx, dg, db = k_batch_norm.batch_norm_backward(np, a["head"], a["data"], a["gamma"], mean, invstd, **kw)
    mm, mv = a["moving_mean"].copy(), a["moving_var"].copy()
    if not kw["use_global_stats"]:  # MXNet updates the moving stats in its backward pass
        k_batch_norm.batch_norm_update_moving(np, mm, mv, mean, invstd, p.get("momentum", 0.9), p["eps"])
    return dict(
        out=out,
        mean=mean,
        var=invstd,
        grad_data=dx,
        grad_gamma=dg,
        grad_beta=db,
        moving_mean_after=mm,
        moving_var_after=mv,
    )


def _lrn(a, p):
    out, norm = k_lrn.lrn(np, a["data"], **p)
    return dict(out=out, grad_data=k_lrn.lrn_backward(np, a["head"], a["data"], norm=norm, **p))


def _leaky(a, p):
    p = dict(p)
    gamma = a.get("gamma")
    out = k_activation.leaky_relu(np, a["data"], gamma=gamma, **p)
    dx, dg = k_activation.leaky_relu_backward(np, a["head"], a["data"], gamma=gamma, **p)
    res = dict(out=out, grad_data=dx)
    if dg is not None:
        res["grad_gamma"] = dg
    return res


def _act(a, p):
    out = k_activation.activation(np, a["data"], **p)
    return dict(out=out, grad_data=k_activation.activation_backward(np, a["head"], out, **p))


def _softmax(a, p):
    fwd, bwd = (
        (k_softmax.softmax, k_softmax.softmax_backward) if a["_case"].startswith("softmax") else (k_softmax.log_softmax, k_softmax.log_softmax_backward)
    )
    out = fwd(np, a["data"], **p)
    return dict(out=out, grad_data=bwd(np, a["head"], out, **p))


def _fc(a, p):
    out = k_fully_connected.fully_connected(np, a["data"], a["weight"], a["bias"], **p)
    dx, dw, db = k_fully_connected.fully_connected_backward(np, a["head"], a["data"], a["weight"], **p)
    return dict(out=out, grad_data=dx, grad_weight=dw, grad_bias=db)


def _softmax_output(a, p):
    out = k_output.softmax_output(np, a["data"], p.get("multi_output", False), p.get("preserve_shape", False))
    grad = k_output.softmax_output_backward(np, out, a["label"], ograd=a["head"], **p)
    return dict(out=out, grad_data=grad)


def _regression(a, p):
    kind = a["_case"].split("_", 1)[1]
    fwd = getattr(k_output, f"{kind}_regression_output")
    bwd = getattr(k_output, f"{kind}_regression_output_backward")
    out = fwd(np, a["data"])
    return dict(out=out, grad_data=bwd(np, out, a["label"], **p))


def _optimizer(a, p):
    name = a["_case"][4:].replace("_noclip", "")
    w = a["weight"].copy()
    states = [a[f"state{i}"].copy() for i in range(3) if f"state{i}" in a]
    getattr(k_optimizer, name)(np, w, a["grad"], *states, **p)
    res = dict(weight_after=w)
    res.update({f"state{i}_after": s for i, s in enumerate(states)})
    return res


DISPATCH = [
    ("conv", _conv),
    ("deconv", _deconv),
    ("pool", _pool),
    ("bn", _bn),
    ("lrn", _lrn),
    ("leaky", _leaky),
    ("act", _act),
    ("softmax", _softmax),
    ("log_softmax", _softmax),
    ("fc", _fc),
    ("so_", _softmax_output),
    ("reg_", _regression),
    ("opt_", _optimizer),
]


def _runner(case: str):
    for prefix, fn in DISPATCH:
        if case.startswith(prefix) and not (prefix == "conv" and case.startswith("deconv")):
            return fn
    raise KeyError(case)


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_mxnet(case: str) -> None:
    arrays = dict(CASES[case], _case=case)
    params = arrays["params"]
    got = _runner(case)(arrays, params)
    expected = [k for k in arrays if k in got and (case, k) not in KNOWN_DIFFERENCES]
    assert expected, f"{case}: nothing to compare"
    for name in expected:
        np.testing.assert_allclose(got[name], arrays[name], rtol=RTOL, atol=ATOL, err_msg=f"{case}: {name}")
