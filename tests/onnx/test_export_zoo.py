"""Model zoo networks export, pass onnx.checker, and run in ONNX Runtime as they run here.

One network per family at the smallest input it takes (densenet, squeezenet and inception end
in fixed-size pooling); the others of a family share its converters (AlexNet and VGG: the
same ops as ResNet's, with 4096-wide dense layers too slow to carry around here). Each is checked at batch 1
(a static export) and at batch 3 (a dynamic one); the reference is one forward of our own at
batch 3 (inference is per sample).
"""

from __future__ import annotations

import numpy as np
import pytest

import mxasync as mx
from mxasync.gluon.model_zoo import vision

# name -> input side
FAST = {"resnet18_v1": 32, "resnet18_v2": 32, "mobilenet0.25": 32, "mobilenetv2_0.25": 32, "squeezenet1.1": 224}
SLOW = {"densenet121": 224, "inceptionv3": 299}
# every model of the zoo, at these sizes: python benchmarks/onnx_zoo.py (docs/onnx.md has the figures)


def _check_model(name, side, tmp_path, ort_run, close, onnx_mod):
    net = vision.get_model(name, classes=10)
    net.initialize(mx.init.MSRAPrelu())
    net.hybridize()
    x = np.random.RandomState(0).uniform(-1, 1, (3, 3, side, side)).astype(np.float32)
    want = net(mx.nd.array(x)).asnumpy()
    net.export(str(tmp_path / "net"))
    sym, params = str(tmp_path / "net-symbol.json"), str(tmp_path / "net-0000.params")
    static = mx.onnx.export_model(sym, params, [(1, 3, side, side)], np.float32, str(tmp_path / "b1.onnx"))
    dynamic = mx.onnx.export_model(sym, params, [(1, 3, side, side)], np.float32, str(tmp_path / "dyn.onnx"),
                                   dynamic=True)
    for path in (static, dynamic):
        onnx_mod.checker.check_model(path)
    d1 = close(ort_run(static, {"data": x[:1]})[0], want[:1])
    d3 = close(ort_run(dynamic, {"data": x})[0], want)
    return d1, d3


@pytest.mark.parametrize("name", sorted(FAST))
def test_zoo_model_matches_onnxruntime(name, tmp_path, ort_run, close, onnx_mod):
    _check_model(name, FAST[name], tmp_path, ort_run, close, onnx_mod)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SLOW))
def test_big_zoo_model_matches_onnxruntime(name, tmp_path, ort_run, close, onnx_mod):
    _check_model(name, SLOW[name], tmp_path, ort_run, close, onnx_mod)
