"""MCC, PearsonCorrelation and PCC against MXNet 1.9.1's values (fixtures/make_metric_correlation.py),
and mx.metric.create from a config (dict or JSON string) round-tripping get_config()."""

import json
from pathlib import Path

import numpy as np
import pytest

import mxasync as mx

REF = json.loads((Path(__file__).parent / "fixtures" / "metric_correlation.json").read_text())
X = {k: np.array(v) for k, v in REF["inputs"].items()}


@pytest.mark.parametrize("avg", ["macro", "micro"])
def test_mcc_and_pearsonr_match_mxnet(avg):
    m = mx.metric.create("mcc", average=avg)
    q = mx.metric.create("pearsonr", average=avg)
    for p, lab in ((X["p1"], X["l1"]), (X["p2"], X["l2"])):
        m.update([mx.nd.array(lab)], [mx.nd.array(p)])
        q.update([mx.nd.array(p[:, 0])], [mx.nd.array(p[:, 1])])
    np.testing.assert_allclose([m.get()[1], m.get_global()[1]], REF[f"mcc_{avg}"], rtol=1e-6)
    np.testing.assert_allclose(q.get()[1], REF[f"pearsonr_{avg}"][0], rtol=1e-6)
    if avg == "macro":  # MXNet 1.9.1 reports 0.0 as the micro global value; ours pools every value seen
        np.testing.assert_allclose(q.get_global()[1], REF[f"pearsonr_{avg}"][1], rtol=1e-6)
    else:
        np.testing.assert_allclose(q.get_global()[1], np.corrcoef(
            np.r_[X["p1"][:, 1], X["p2"][:, 1]], np.r_[X["p1"][:, 0], X["p2"][:, 0]])[0, 1], rtol=1e-6)


def test_pcc_matches_mxnet_and_grows_classes():
    c = mx.metric.PCC()
    c.update([mx.nd.array([0, 1, 2, 2, 1])], [mx.nd.array([0, 2, 2, 1, 1])])
    assert c.k == 3
    np.testing.assert_allclose(c.get()[1], REF["pcc"])
    c.reset_local()
    assert np.isnan(c.get()[1]) and c.get_global()[1] == pytest.approx(REF["pcc"])


def test_mcc_zero_denominator_is_zero_and_empty_is_nan():
    m = mx.metric.MCC()
    assert np.isnan(m.get()[1])
    m.update([mx.nd.array([0, 0])], [mx.nd.array([[0.9, 0.1], [0.8, 0.2]])])
    assert m.get()[1] == 0.0


@pytest.mark.parametrize("metric,args,kwargs", [
    ("acc", (), {"axis": 0}), ("mcc", (), {}), ("pcc", (), {}), ("pearsonr", (), {}), ("perplexity", (-1,), {}),
    (["acc", "f1"], (), {}),
])
def test_create_from_config(metric, args, kwargs):
    m = mx.metric.create(metric, *args, **kwargs)
    config = m.get_config()
    assert mx.metric.create(json.dumps(config)).get_config() == config
    assert mx.metric.create(config).get_config() == config
    with pytest.raises(ValueError):
        mx.metric.create(json.dumps(config), 1)
    with pytest.raises(ValueError):
        mx.metric.create({"name": "x"})
