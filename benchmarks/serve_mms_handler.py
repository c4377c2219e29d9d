"""The MXNet Model Server handler ``benchmarks/serve.py --mms`` serves its models with (MXNet 1.9.1's Module).

It runs inside MMS's Python worker, under MXNet 1.9.1: nothing of mxasync is imported. The
model folder holds one checkpoint (``NAME-symbol.json``, ``NAME-0001.params``). Each call gets
the batch MMS assembled (up to its ``batch_size`` within ``max_batch_delay``): one ``.npy``
example per request, stacked and run as one forward pass (Module reshapes to the batch size;
a ``softmax_label`` input gets zeros, as ``Module.predict`` gives it),
answered as one JSON row per request. This is what MMS's own ``mxnet_model_service`` does.
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

    prefix = glob.glob(os.path.join(model_dir, "*-symbol.json"))[0][: -len("-symbol.json")]
    sym, args, aux = mx.model.load_checkpoint(prefix, 1)
    labels = [n for n in sym.list_arguments() if n.endswith("label")]  # LeNet's softmax_label: fed zeros
    mod = mx.mod.Module(sym, data_names=["data"], label_names=labels or None, context=mx.cpu())
    with open(os.path.join(model_dir, "shape.json")) as f:
        shape = tuple(json.load(f))
    mod.bind(data_shapes=[("data", (1, *shape))], label_shapes=[(n, (1,)) for n in labels] or None,
             for_training=False)
    mod.set_params(args, aux)
    return mod, bool(labels)


def handle(data, context):
    global _module
    import mxnet as mx

    if _module is None:
        _module = _load(context.system_properties.get("model_dir"))
    if data is None:
        return None
    mod, labelled = _module
    batch = np.stack([np.load(io.BytesIO(d.get("body") or d.get("data"))) for d in data])
    label = [mx.nd.zeros((len(batch),))] if labelled else None  # Module reshapes to the batch from these
    mod.forward(mx.io.DataBatch([mx.nd.array(batch)], label), is_train=False)
    out = mod.get_outputs()[0].asnumpy()
    return [json.dumps(row.tolist()) for row in out]
