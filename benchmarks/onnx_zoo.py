"""Every network of ``gluon.model_zoo.vision`` through ONNX: prints one JSON line per model.

Each network (10 classes, He-initialised) is exported twice, statically at batch 1 and with
``dynamic=True``, and ONNX Runtime's outputs are compared with ours on the same random inputs
at batch 1 and 3: the maximum absolute difference, and the output's scale beside it. The test
suite checks one network per family (tests/onnx/test_export_zoo.py); this checks them all.

    python benchmarks/onnx_zoo.py [name ...]
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time

import numpy as np
import onnxruntime as ort

import mxasync as mx
from mxasync.gluon.model_zoo import vision


def side(name: str) -> int:
    """The smallest input the network takes (fixed-size pooling at the end of some)."""
    if "inception" in name:
        return 299
    if name.startswith(("densenet", "squeezenet")):
        return 224
    return 64 if "alexnet" in name else 32


def check(name: str, folder: str) -> dict:
    start = time.perf_counter()
    s = side(name)
    net = vision.get_model(name, classes=10)
    net.initialize(mx.init.MSRAPrelu())
    net.hybridize()
    x = np.random.RandomState(0).uniform(-1, 1, (3, 3, s, s)).astype(np.float32)
    want = net(mx.nd.array(x)).asnumpy()
    prefix = os.path.join(folder, "net")
    net.export(prefix)
    files = (prefix + "-symbol.json", prefix + "-0000.params")
    so = ort.SessionOptions()
    so.log_severity_level = 3
    diffs = {}
    for label, dynamic, batch in (("batch1", False, 1), ("batch3_dynamic", True, 3)):
        path = mx.onnx.export_model(*files, [(1, 3, s, s)], np.float32, os.path.join(folder, f"{label}.onnx"),
                                    dynamic=dynamic, keep_initializers_as_inputs=False)
        got = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"]).run(None, {"data": x[:batch]})[0]
        diffs[label] = float(np.abs(got - want[:batch]).max())
    return {"model": name, "side": s, "output_scale": float(np.abs(want).max()), **diffs,
            "seconds": round(time.perf_counter() - start, 1)}


def main(names: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        for name in names or sorted(vision._MODELS):
            print(json.dumps(check(name, folder)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
