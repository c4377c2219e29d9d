"""The MXNet Model Server handler ``benchmarks/serve.py --mms`` serves its models with (MXNet 1.9.1's Gluon).

It runs inside MMS's Python worker, under MXNet 1.9.1: nothing of mxasync is imported. The
model folder holds one checkpoint (``NAME-symbol.json``, ``NAME-0001.params``). Each call gets
the batch MMS assembled (up to its ``batch_size`` within ``max_batch_delay``): one ``.npy``
example per request, stacked and run as one forward pass of a hybridized ``SymbolBlock`` (a
``softmax_label`` input gets zeros), answered as one JSON row per request. (MXNet 1.9.1's
``Module`` fails on the exported ResNet-18 on CPU: "We can't generate TBlob for MKLDNN data".)
"""

from __future__ import annotations

import glob
import io
import json
import os

import numpy as np

_module = None


def _load(model_dir: str):
    import mxnet as mx

    symbol_file = glob.glob(os.path.join(model_dir, "*-symbol.json"))[0]
    params_file = symbol_file[: -len("-symbol.json")] + "-0001.params"
    labels = [n for n in mx.sym.load(symbol_file).list_arguments() if n.endswith("label")]  # LeNet's softmax_label
    net = mx.gluon.SymbolBlock.imports(symbol_file, ["data", *labels], params_file)
    net.hybridize()
    return net, bool(labels)


def handle(data, context):
    global _module
    import mxnet as mx

    if _module is None:
        _module = _load(context.system_properties.get("model_dir"))
    if data is None:
        return None
    net, labelled = _module
    batch = mx.nd.array(np.stack([np.load(io.BytesIO(d.get("body") or d.get("data"))) for d in data]))
    out = (net(batch, mx.nd.zeros((batch.shape[0],))) if labelled else net(batch)).asnumpy()
    return [json.dumps(row.tolist()) for row in out]
