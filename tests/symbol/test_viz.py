"""mx.viz: the summary table and the graphviz drawing."""

from __future__ import annotations

import pytest

from mxasync import symbol as sym
from mxasync import viz


def lenet():
    h = sym.Convolution(sym.Variable("data"), kernel=(5, 5), num_filter=4, name="conv1")
    h = sym.BatchNorm(h, name="bn1")
    h = sym.Activation(h, act_type="relu", name="relu1")
    h = sym.Pooling(h, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool1")
    h = sym.FullyConnected(sym.Flatten(h, name="flat"), num_hidden=10, name="fc")
    return sym.SoftmaxOutput(h, name="softmax")


def test_print_summary(capsys):
    viz.print_summary(lenet(), {"data": (1, 1, 28, 28)})
    out = capsys.readouterr().out
    assert "conv1(Convolution)" in out and "4x24x24" in out
    assert "fc(FullyConnected)" in out and "5770" in out  # 576 * 10 + 10
    total = 4 * 25 + 4 + 4 * 4 + 5770  # BatchNorm: gamma, beta and the two moving statistics
    assert f"Total params: {total}" in out


def test_plot_network():
    graphviz = pytest.importorskip("graphviz")
    dot = viz.plot_network(lenet(), shape={"data": (1, 1, 28, 28)})
    assert isinstance(dot, graphviz.Digraph)
    src = dot.source
    assert "Convolution" in src and "5x5/1x1, 4" in src and "4x24x24" in src
    assert "conv1_weight" not in src  # weights are hidden by default
    assert "conv1_weight" in viz.plot_network(lenet(), hide_weights=False).source
