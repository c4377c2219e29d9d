"""The model zoo against MXNet 1.9.1: parameter names and shapes of every network, and the values of two
networks recorded by ``fixtures_model_zoo/make_fixtures.py`` (outputs, gradients, running statistics)."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import numpy as np
import pytest

import mxasync as mx
from mxasync import autograd, gluon
from mxasync.gluon.model_zoo import model_store, vision

HERE = Path(__file__).parent / "fixtures_model_zoo"
NAMES = json.loads(gzip.open(HERE / "param_names.json.gz", "rt").read())
RTOL, ATOL = 1e-4, 1e-5
# a training pass normalises by statistics of the batch; float32 rounding of MXNet and ours differ by ~3e-5
TRAIN_ATOL = 1e-4


def _strip(name: str, prefix: str) -> str:
    assert name.startswith(prefix), (name, prefix)
    return name[len(prefix):]


@pytest.mark.parametrize("name", sorted(NAMES))
def test_names_and_shapes_match_mxnet(name):
    """Every parameter MXNet declares, in its order, with its declared and its inferred shape."""
    ref = NAMES[name]
    net = vision.get_model(name)
    ref_prefix = ref["declared"][0][0].split("_")[0] + "_"
    ours = [[_strip(k, net.prefix), list(p.shape)] for k, p in net.collect_params().items()]
    assert ours == [[_strip(k, ref_prefix), s] for k, s in ref["declared"]]
    size = 299 if name == "inceptionv3" else 224
    sym = net(mx.sym.var("data"))
    arg_shapes, out_shapes, aux_shapes = sym.infer_shape(data=(1, 3, size, size))
    inferred = dict(zip(sym.list_arguments(), arg_shapes, strict=True))
    inferred.update(zip(sym.list_auxiliary_states(), aux_shapes, strict=True))
    inferred.pop("data")
    assert {_strip(k, net.prefix): list(s) for k, s in inferred.items()} == \
        {_strip(k, ref_prefix): s for k, s in ref["inferred"].items()}
    assert out_shapes == [(1, 1000)]


@pytest.mark.parametrize("name,kwargs,size", [
    ("resnet18_v1", dict(classes=10), 32),
    ("resnet18_v2", dict(classes=7, thumbnail=True), 16),
    ("mobilenet0.25", {}, 32),
    ("mobilenetv2_0.25", dict(classes=3), 32),
])  # the others' shapes are checked symbolically above (initialising VGG's 120M weights takes seconds)
def test_forward_shapes_small_inputs(name, kwargs, size):
    net = vision.get_model(name, **kwargs)
    net.initialize(mx.init.Xavier())
    out = net(mx.nd.random.uniform(shape=(2, 3, size, size)))
    assert out.shape == (2, kwargs.get("classes", 1000))
    assert np.isfinite(out.asnumpy()).all()


def _close_grad(ours, want, name):
    """Gradients through training-mode BatchNorm amplify float32 rounding: against a float64 run, MXNet's and
    ours are off by up to ~3e-4 of the gradient's largest value (ours is the closer one), so the tolerance
    scales with that value."""
    np.testing.assert_allclose(ours.asnumpy(), want, rtol=1e-3, atol=1e-3 * max(1.0, np.abs(want).max()),
                               err_msg=name)


def _check_values(net, ref, ref_prefix):
    """Predict-mode output, then one recorded training pass: output, input and parameter gradients,
    running statistics after the step (parameters named as MXNet's with ``ref_prefix``)."""
    x = mx.nd.array(ref["x"])
    np.testing.assert_allclose(net(x).asnumpy(), ref["out_predict"], rtol=RTOL, atol=ATOL)
    x.attach_grad()
    with autograd.record():
        y = net(x)
    y.backward(mx.nd.array(ref["head"]))
    np.testing.assert_allclose(y.asnumpy(), ref["out_train"], rtol=RTOL, atol=TRAIN_ATOL)
    _close_grad(x.grad, ref["grad_x"], "data")
    params = net.collect_params()
    checked = 0
    for key in ref.files:
        kind, _, pname = key.partition("/")
        pname = net.prefix + pname[len(ref_prefix):]
        if kind == "grad":
            _close_grad(params[pname].grad(), ref[key], pname)
            checked += 1
        elif kind == "after":
            np.testing.assert_allclose(params[pname].data().asnumpy(), ref[key], rtol=RTOL, atol=TRAIN_ATOL,
                                       err_msg=pname)
            checked += 1
    assert checked >= 3


def test_mobilenet_pretrained_file_from_mxnet():
    """``pretrained=True`` finds MXNet's model-zoo file by its name and loads its format (prefix stripped)."""
    net = vision.get_model("mobilenet0.25", pretrained=True, root=str(HERE))
    with np.load(HERE / "mobilenet0.25.npz") as ref:
        _check_values(net, ref, "mobilenet0_")


def _thin_resnet():
    return vision.ResNetV1(vision.BasicBlockV1, [2, 2, 2, 2], [4, 4, 8, 16, 32], classes=10)


@pytest.mark.parametrize("fmt", ["save_parameters", "legacy", "hybridized"])
def test_thin_resnet18_matches_mxnet(fmt):
    net = _thin_resnet()
    if fmt == "legacy":
        net.load_parameters(str(HERE / "resnet18_thin-legacy.params"))
    else:
        net.load_parameters(str(HERE / "resnet18_thin.params"))
    if fmt == "hybridized":
        net.hybridize()
    with np.load(HERE / "resnet18_thin.npz") as ref:
        _check_values(net, ref, "resnetv10_")


def test_thin_resnet18_export_imports():
    """MXNet's ``export`` of the same network runs as a SymbolBlock with the same outputs."""
    net = gluon.SymbolBlock.imports(str(HERE / "resnet18_thin-symbol.json"), ["data"],
                                    str(HERE / "resnet18_thin-0000.params"))
    with np.load(HERE / "resnet18_thin.npz") as ref:
        np.testing.assert_allclose(net(mx.nd.array(ref["x"])).asnumpy(), ref["out_export"], rtol=RTOL, atol=ATOL)


def test_pretrained_missing_file_names_it(tmp_path, monkeypatch):
    monkeypatch.setenv("MXNET_HOME", str(tmp_path))
    want = os.path.join(str(tmp_path), "models", "resnet18_v1-a0666292.params")
    with pytest.raises(model_store.ModelFileNotFoundError, match=f"expected the file {want}"):
        vision.resnet18_v1(pretrained=True)
    with pytest.raises(FileNotFoundError, match="squeezenet1.1-33ba0f93.params"):
        vision.get_model("squeezenet1.1", pretrained=True, root=str(tmp_path / "elsewhere"))


def test_get_model_file_warns_on_a_different_file(tmp_path, caplog):
    path = tmp_path / "alexnet-44335d1f.params"
    path.write_bytes(b"not MXNet's file")
    assert model_store.get_model_file("alexnet", root=str(tmp_path)) == str(path)
    assert "differs from the file MXNet publishes" in caplog.text
    model_store.purge(str(tmp_path))
    assert not path.exists()


def test_get_model_errors():
    with pytest.raises(ValueError, match="Model resnet19_v1 is not supported"):
        vision.get_model("ResNet19_v1")
    with pytest.raises(ValueError, match="Pretrained model for nonet is not available"):
        model_store.get_model_file("nonet")
    assert vision.get_model("MobileNet0.25").__class__ is vision.MobileNet


MXREF = os.environ.get("MXASYNC_MXNET_PYTHON", "/work/venvs/mx191/bin/python")  # README: Test


@pytest.mark.skipif(not os.path.exists(MXREF), reason=f"no MXNet 1.9.1 at {MXREF} (set MXASYNC_MXNET_PYTHON to the python of a venv with mxnet==1.9.1, README: Test)")
def test_our_export_loads_in_mxnet(tmp_path):
    """Our ``export`` of mobilenetv2 (convolutions, depthwise ones, BatchNorm, pooling, clip, elemwise_add) runs
    in MXNet with our outputs."""
    import subprocess

    net = vision.get_model("mobilenetv2_0.25", classes=5)
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = np.random.default_rng(3).standard_normal((2, 3, 32, 32)).astype(np.float32)
    y = net(mx.nd.array(x)).asnumpy()
    net.export(str(tmp_path / "ours"))
    np.save(tmp_path / "x.npy", x)
    script = ("import numpy as np, mxnet as mx, sys; d = sys.argv[1]; "
              "b = mx.gluon.SymbolBlock.imports(d + '/ours-symbol.json', ['data'], d + '/ours-0000.params'); "
              "np.save(d + '/y.npy', b(mx.nd.array(np.load(d + '/x.npy'))).asnumpy())")
    subprocess.run([MXREF, "-c", script, str(tmp_path)], check=True, capture_output=True, timeout=120)
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), y, rtol=1e-4, atol=1e-5)
