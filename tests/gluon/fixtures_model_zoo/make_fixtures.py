"""Record model-zoo fixtures with MXNet 1.9.1 for ``tests/gluon/test_model_zoo.py``. Run by hand:

    /work/mxref/bin/python tests/gluon/fixtures_model_zoo/make_fixtures.py

Writes, next to this script:

- ``param_names.json.gz``: for every ``get_model`` name, the parameters MXNet declares (name, declared
  shape with 0 for deferred sizes) and the argument/aux shapes its symbol infers for a 224x224 input
  (299 for inceptionv3).
- ``mobilenet0.25-9f83e440.params``: ``mobilenet0.25`` (classes=1000) initialised with ``Xavier`` and random
  running statistics, in the format (and under the name) of MXNet's model-zoo file (``ParameterDict.save``
  with the network's prefix stripped), so ``pretrained=True, root=<here>`` finds it; ``mobilenet0.25.npz``: a (2, 3, 64, 64) input, the
  outputs in predict and train mode, the input gradient and three parameter gradients (train mode, head 1s
  times a fixed weight).
- ``resnet18_thin.params`` / ``.npz``, ``resnet18_thin-legacy.params`` and ``resnet18_thin-symbol.json`` /
  ``-0000.params``: resnet18_v1's structure and names with channels (4, 4, 8, 16, 32) and 10 classes (a
  full resnet18 file is 45 MB), saved by ``save_parameters``, in the model-zoo format and by ``export`` (after the training pass; ``out_export`` is
  its predict-mode output); the npz holds the same values as for mobilenet plus every
  parameter gradient.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import mxnet as mx
import numpy as np
from mxnet import autograd
from mxnet.gluon.model_zoo import vision

HERE = Path(__file__).resolve().parent
MODELS = ["resnet18_v1", "resnet34_v1", "resnet50_v1", "resnet101_v1", "resnet152_v1",
          "resnet18_v2", "resnet34_v2", "resnet50_v2", "resnet101_v2", "resnet152_v2",
          "vgg11", "vgg13", "vgg16", "vgg19", "vgg11_bn", "vgg13_bn", "vgg16_bn", "vgg19_bn",
          "alexnet", "inceptionv3", "densenet121", "densenet161", "densenet169", "densenet201",
          "squeezenet1.0", "squeezenet1.1", "mobilenet1.0", "mobilenet0.75", "mobilenet0.5", "mobilenet0.25",
          "mobilenetv2_1.0", "mobilenetv2_0.75", "mobilenetv2_0.5", "mobilenetv2_0.25"]


def param_names() -> None:
    out = {}
    for name in MODELS:
        net = vision.get_model(name)
        declared = [[k, list(p.shape)] for k, p in net.collect_params().items()]
        sym = net(mx.sym.var("data"))
        size = 299 if name == "inceptionv3" else 224
        arg_shapes, _, aux_shapes = sym.infer_shape(data=(1, 3, size, size))
        inferred = dict(zip(sym.list_arguments(), map(list, arg_shapes), strict=False))
        inferred.update(zip(sym.list_auxiliary_states(), map(list, aux_shapes), strict=False))
        inferred.pop("data")
        out[name] = dict(declared=declared, inferred=inferred)
    with gzip.open(HERE / "param_names.json.gz", "wt") as f:
        json.dump(out, f)


def record(net, tag: str, grad_names: list[str] | None, export: bool, structural: bool, legacy: str | None) -> None:
    rng = np.random.default_rng(20261123)
    net.initialize(mx.init.Xavier(magnitude=2))
    x = mx.nd.array(rng.standard_normal((2, 3, 64, 64)).astype(np.float32))
    net(x)  # finish deferred initialisation
    for k, p in net.collect_params().items():  # random statistics so predict mode uses them
        if k.endswith("running_mean"):
            p.set_data(mx.nd.array(rng.uniform(-0.2, 0.2, p.shape).astype(np.float32)))
        elif k.endswith("running_var"):
            p.set_data(mx.nd.array(rng.uniform(0.5, 1.5, p.shape).astype(np.float32)))
    if structural:  # MXNet 1.9's save_parameters: keys by structure ('features.0.weight')
        net.save_parameters(str(HERE / f"{tag}.params"))
    if legacy:  # the model-zoo files' format: full names without the network's prefix ('conv0_weight')
        net.collect_params().save(str(HERE / legacy), strip_prefix=net.prefix)
    arrays = {"x": x.asnumpy(), "out_predict": net(x).asnumpy()}
    head = mx.nd.array(rng.uniform(0.5, 1.5, arrays["out_predict"].shape).astype(np.float32))
    x.attach_grad()
    params = net.collect_params()
    with autograd.record():
        y = net(x)
    y.backward(head)
    arrays["head"] = head.asnumpy()
    arrays["out_train"] = y.asnumpy()
    arrays["grad_x"] = x.grad.asnumpy()
    names = grad_names if grad_names is not None else [k for k, p in params.items() if p.grad_req != "null"]
    for k in names:
        if params[k].grad_req == "null":
            continue
        arrays[f"grad/{k}"] = params[k].grad().asnumpy()
    for k, p in params.items():  # the running statistics after one training step (momentum 0.9)
        if k.endswith(("running_mean", "running_var")) and (grad_names is None or k in grad_names):
            arrays[f"after/{k}"] = p.data().asnumpy()
    if export:  # after the training pass: the exported running statistics are the updated ones
        net.hybridize()
        arrays["out_export"] = net(x).asnumpy()
        net.export(str(HERE / tag))
    np.savez_compressed(HERE / f"{tag}.npz", **arrays)


def main() -> None:
    mx.random.seed(7)
    np.random.seed(7)
    param_names()
    mobile = vision.get_model("mobilenet0.25", prefix="mobilenet0_")  # the prefix a fresh process gives
    record(mobile, "mobilenet0.25", ["mobilenet0_conv0_weight", "mobilenet0_batchnorm0_gamma",
                                     "mobilenet0_dense0_bias",
                                     "mobilenet0_batchnorm0_running_mean", "mobilenet0_batchnorm0_running_var"],
           export=False, structural=False, legacy="mobilenet0.25-9f83e440.params")
    thin = vision.ResNetV1(vision.BasicBlockV1, [2, 2, 2, 2], [4, 4, 8, 16, 32], classes=10,
                           prefix="resnetv10_")
    record(thin, "resnet18_thin", None, export=True, structural=True, legacy="resnet18_thin-legacy.params")


if __name__ == "__main__":
    main()
