"""Metrics against hand-computed numbers and against MXNet 1.9.1's values (fixtures)."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

import mxasync as mx
from mxasync import metric

FIXTURES = np.load(os.path.join(os.path.dirname(__file__), "optimizer", "fixtures", "metrics.npz"))
MX_CASES = sorted({k.split("/")[0] for k in FIXTURES.files if "/" in k})


def nd(x):
    return mx.nd.array(np.asarray(x, dtype=np.float32))


@pytest.mark.parametrize("case", MX_CASES)
def test_matches_mxnet(case):
    name, kwargs, lab, pred = json.loads(str(FIXTURES[f"{case}/config"]))
    m = metric.create(name, **kwargs)
    half = len(FIXTURES[lab]) // 2
    for sl in (slice(0, half), slice(half, None)):
        m.update([nd(FIXTURES[lab][sl])], [nd(FIXTURES[pred][sl])])
    assert m.get()[1] == pytest.approx(float(FIXTURES[f"{case}/value"]), rel=1e-5)


def test_accuracy_local_and_global():
    acc = metric.Accuracy()
    acc.update([nd([0, 1])], [nd([[0.9, 0.1], [0.8, 0.2]])])
    assert acc.get() == ("accuracy", 0.5)
    acc.reset_local()
    assert math.isnan(acc.get()[1]) and acc.get_global() == ("accuracy", 0.5)
    acc.update([nd([1, 1])], [nd([1, 1])])  # same shape as labels: taken as class ids
    assert acc.get()[1] == 1.0 and acc.get_global()[1] == 0.75
    acc.reset()
    assert math.isnan(acc.get_global()[1])
    acc0 = metric.Accuracy(axis=0)
    acc0.update([nd([1, 0])], [nd([[0.1, 0.7], [0.9, 0.3]])])
    assert acc0.get()[1] == 1.0
    with pytest.raises(ValueError, match="does not match"):
        acc.update([nd([1])], [nd([1]), nd([2])])


def test_top_k_and_cross_entropy_by_hand():
    probs = nd([[0.1, 0.6, 0.3], [0.5, 0.2, 0.3], [0.2, 0.3, 0.5]])
    labels = nd([2, 1, 0])
    top2 = metric.create("top_k_accuracy", top_k=2)
    top2.update([labels], [probs])
    assert top2.get() == ("top_k_accuracy_2", pytest.approx(1 / 3))
    ce = metric.CrossEntropy(eps=0.0)
    ce.update([labels], [probs])
    assert ce.get()[1] == pytest.approx(-(math.log(0.3) + math.log(0.2) + math.log(0.2)) / 3, rel=1e-6)
    nll = metric.create("nll_loss")
    nll.update([labels], [probs])
    assert nll.name == "nll-loss" and nll.get()[1] == pytest.approx(ce.get()[1], rel=1e-6)
    ppl = metric.Perplexity(ignore_label=0)
    ppl.update([labels], [probs])  # the third sample (label 0) is ignored
    assert ppl.get()[1] == pytest.approx(math.exp(-(math.log(0.3) + math.log(0.2)) / 2), rel=1e-6)
    with pytest.raises(ValueError):
        metric.TopKAccuracy(top_k=1)


def test_f1_macro_and_micro():
    # batch 1: tp=1 fp=1 fn=0 -> f1 2/3; batch 2: tp=1 fp=0 fn=1 -> f1 2/3; pooled: tp=2 fp=1 fn=1 -> 2/3
    b1 = ([nd([1, 0, 0])], [nd([[0.2, 0.8], [0.3, 0.7], [0.9, 0.1]])])
    b2 = ([nd([1, 1, 0])], [nd([[0.2, 0.8], [0.6, 0.4], [0.9, 0.1]])])
    macro, micro = metric.F1(), metric.F1(average="micro")
    for m in (macro, micro):
        m.update(*b1)
        m.update(*b2)
    assert macro.get()[1] == pytest.approx(2 / 3) and micro.get()[1] == pytest.approx(2 / 3)
    assert micro.num_inst == 6 and macro.num_inst == 2
    with pytest.raises(ValueError, match="binary"):
        metric.F1().update([nd([0, 1, 2])], [nd(np.ones((3, 3)))])


def test_regression_metrics():
    label, pred = nd([1.0, 2.0, 3.0]), nd([1.5, 2.0, 2.0])
    values = {}
    for name in ("mse", "mae", "rmse"):
        m = metric.create(name)
        m.update([label], [pred])
        values[name] = m.get()[1]
    assert values == pytest.approx({"mse": 1.25 / 3, "mae": 0.5, "rmse": math.sqrt(1.25 / 3)})
    loss = metric.Loss()
    loss.update(None, [nd([1.0, 3.0])])
    assert loss.get() == ("loss", 2.0)


def test_composite_create_and_custom():
    comp = metric.create(["acc", "mse"])
    assert isinstance(comp, metric.CompositeEvalMetric)
    comp.update([nd([0, 1])], [nd([[0.9, 0.1], [0.2, 0.8]])])
    names, values = comp.get()
    assert names == ["accuracy", "mse"] and values[0] == 1.0
    assert comp.get_name_value()[0] == ("accuracy", 1.0) and comp.get_metric(1).name == "mse"
    comp.reset_local()
    assert math.isnan(comp.get()[1][0]) and comp.get_global()[1][0] == 1.0

    def half_sum(label, pred):
        return float((label == pred.argmax(1)).sum()), label.size

    custom = metric.create(half_sum)
    custom.update([nd([0, 1])], [nd([[0.9, 0.1], [0.9, 0.1]])])
    assert custom.get() == ("half_sum", 0.5)
    lam = metric.np(lambda label, pred: 3.0)
    lam.update([nd([0])], [nd([0])])
    assert lam.name.startswith("custom(") and lam.get()[1] == 3.0
    assert metric.create(metric.Accuracy).name == "accuracy"
    with pytest.raises(ValueError, match="Cannot find metric"):
        metric.create("nope")
    assert metric.Accuracy().get_config()["metric"] == "Accuracy"
    by_name = metric.Accuracy(output_names=["out"], label_names=["lab"])
    by_name.update_dict({"lab": nd([1]), "other": nd([0])}, {"out": nd([[0.1, 0.9]])})
    assert by_name.get()[1] == 1.0


def test_perplexity_clips_out_of_range_labels_as_mxnet():
    # MXNet picks with mode='clip': a label past the last class reads the last class's probability
    metric = mx.metric.Perplexity(ignore_label=None)
    metric.update([mx.nd.array([3])], [mx.nd.array([[0.2, 0.3, 0.5]])])
    assert abs(metric.get()[1] - 2.0) < 1e-6
