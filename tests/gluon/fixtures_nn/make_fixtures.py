"""Record Gluon layer cases (``layer_cases.py``) with MXNet 1.9.1 for ``tests/gluon/test_nn_layers.py``:

    /work/mxref/bin/python tests/gluon/fixtures_nn/make_fixtures.py

For case ``i`` the layer is built with ``prefix='layer_'``, initialised (``Uniform(0.5)``, running statistics
set to random values), and ``mxnet_ref.npz`` stores ``i/x``, the predict-mode output ``i/out``, the
training-mode output ``i/out_train``, the head ``i/head``, the input gradient ``i/grad_x`` (float inputs),
each parameter ``i/param/<name>`` (before the training pass) and its gradient ``i/grad/<name>``;
``spec.json`` holds each layer's ``repr`` and its parameter names and shapes before initialisation.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import mxnet as mx
import numpy as np
from mxnet import autograd
from mxnet.gluon import nn

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from layer_cases import CASES, build  # noqa: E402


def main() -> None:
    rng = np.random.default_rng(11)
    mx.random.seed(11)
    store, spec = {}, []
    for i, (expr, shape, kind) in enumerate(CASES):
        layer = build(expr, nn)
        declared = [[k, list(p.shape)] for k, p in layer.collect_params().items()]
        if kind == "normal":
            x = rng.standard_normal(shape).astype(np.float32)
        else:
            x = rng.integers(0, int(kind.split(":")[1]), shape).astype(np.float32)
        layer.initialize(mx.init.Uniform(0.5))
        xs = mx.nd.array(x)
        layer(xs)
        params = layer.collect_params()
        for k, p in params.items():
            if k.endswith(("running_mean", "running_var")):
                lo = -0.3 if k.endswith("mean") else 0.5
                p.set_data(mx.nd.array(rng.uniform(lo, lo + 1.0, p.shape).astype(np.float32)))
            store[f"{i}/param/{k}"] = p.data().asnumpy()
        store[f"{i}/x"] = x
        store[f"{i}/out"] = layer(xs).asnumpy()
        if kind == "normal":
            xs.attach_grad()
        with autograd.record():
            y = layer(xs)
        head = rng.uniform(0.5, 1.5, y.shape).astype(np.float32)
        y.backward(mx.nd.array(head))
        if "Dropout" not in expr:  # its training output is random
            store[f"{i}/out_train"] = y.asnumpy()
            store[f"{i}/head"] = head
            if kind == "normal":
                store[f"{i}/grad_x"] = xs.grad.asnumpy()
            for k, p in params.items():
                if p.grad_req != "null":
                    store[f"{i}/grad/{k}"] = p.grad().asnumpy()
        spec.append(dict(expr=expr, repr=repr(layer), declared=declared))
    np.savez_compressed(HERE / "mxnet_ref.npz", **store)
    (HERE / "spec.json").write_text(json.dumps(spec, indent=1))


if __name__ == "__main__":
    main()
