"""Replay outputs and gradients recorded from the real MXNet 1.9.1 (see fixtures/make_fixtures.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mxasync.operator import kernels as K

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
    out = K.convolution(np, a["data"], a["weight"], a["bias"], **p)
    dx, dw, db = K.convolution_backward(np, a["head"], a["data"], a["weight"], **p)
    return dict(out=out, grad_data=dx, grad_weight=dw, grad_bias=db)


def _deconv(a, p):
    out = K.deconvolution(np, a["data"], a["weight"], a["bias"], **p)
    dx, dw, db = K.deconvolution_backward(np, a["head"], a["data"], a["weight"], **p)
    return dict(out=out, grad_data=dx, grad_weight=dw, grad_bias=db)


def _pool(a, p):
    return dict(out=K.pooling(np, a["data"], **p), grad_data=K.pooling_backward(np, a["head"], a["data"], **p))


def _bn(a, p):
    kw = dict(fix_gamma=p["fix_gamma"], use_global_stats=p.get("use_global_stats", False), axis=p.get("axis", 1))
    out, mean, invstd = K.batch_norm(
        np, a["data"], a["gamma"], a["beta"], a["moving_mean"], a["moving_var"], eps=p["eps"], **kw
    )
    dx, dg, db = K.batch_norm_backward(np, a["head"], a["data"], a["gamma"], mean, invstd, **kw)
    mm, mv = a["moving_mean"].copy(), a["moving_var"].copy()
    if not kw["use_global_stats"]:  # MXNet updates the moving stats in its backward pass
        K.batch_norm_update_moving(np, mm, mv, mean, invstd, p.get("momentum", 0.9), p["eps"])
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
    out, norm = K.lrn(np, a["data"], **p)
    return dict(out=out, grad_data=K.lrn_backward(np, a["head"], a["data"], norm=norm, **p))


def _leaky(a, p):
    p = dict(p)
    gamma = a.get("gamma")
    out = K.leaky_relu(np, a["data"], gamma=gamma, **p)
    dx, dg = K.leaky_relu_backward(np, a["head"], a["data"], gamma=gamma, **p)
    res = dict(out=out, grad_data=dx)
    if dg is not None:
        res["grad_gamma"] = dg
    return res


def _act(a, p):
    out = K.activation(np, a["data"], **p)
    return dict(out=out, grad_data=K.activation_backward(np, a["head"], out, **p))


def _softmax(a, p):
    fwd, bwd = (
        (K.softmax, K.softmax_backward) if a["_case"].startswith("softmax") else (K.log_softmax, K.log_softmax_backward)
    )
    out = fwd(np, a["data"], **p)
    return dict(out=out, grad_data=bwd(np, a["head"], out, **p))


def _fc(a, p):
    out = K.fully_connected(np, a["data"], a["weight"], a["bias"], **p)
    dx, dw, db = K.fully_connected_backward(np, a["head"], a["data"], a["weight"], **p)
    return dict(out=out, grad_data=dx, grad_weight=dw, grad_bias=db)


def _softmax_output(a, p):
    out = K.softmax_output(np, a["data"], p.get("multi_output", False), p.get("preserve_shape", False))
    grad = K.softmax_output_backward(np, out, a["label"], ograd=a["head"], **p)
    return dict(out=out, grad_data=grad)


def _regression(a, p):
    kind = a["_case"].split("_", 1)[1]
    fwd = getattr(K, f"{kind}_regression_output")
    bwd = getattr(K, f"{kind}_regression_output_backward")
    out = fwd(np, a["data"])
    return dict(out=out, grad_data=bwd(np, out, a["label"], **p))


def _optimizer(a, p):
    name = a["_case"][4:].replace("_noclip", "")
    w = a["weight"].copy()
    states = [a[f"state{i}"].copy() for i in range(3) if f"state{i}" in a]
    getattr(K, name)(np, w, a["grad"], *states, **p)
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
