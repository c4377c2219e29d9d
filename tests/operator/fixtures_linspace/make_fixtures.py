"""Record MXNet 1.9.1's ``_linspace`` (mx.sym.linspace) and ``_histogram`` (mx.sym.histogram). By hand only:

    /work/mxref/bin/python tests/operator/fixtures_linspace/make_fixtures.py

Per case its inputs ``in0``... (histogram), outputs ``out0``... and ``<case>/spec`` (the params as JSON), into ``mxnet_ref.npz``.
"""

from __future__ import annotations

import json
from pathlib import Path

import mxnet as mx
import numpy as np

HERE = Path(__file__).resolve().parent
store: dict[str, np.ndarray] = {}
CASES = {
    "basic": dict(start=0.0, stop=1.0, num=5),
    "no_endpoint": dict(start=2.0, stop=-1.0, num=4, endpoint=False),
    "int32": dict(start=0.0, stop=10.0, num=4, dtype="int32"),
    "float64": dict(start=-3.0, stop=7.5, num=11, dtype="float64"),
    "one": dict(start=0.5, stop=1.0, num=1),
}
for case, params in CASES.items():
    sym = mx.sym.linspace(**params)
    store[f"{case}/out0"] = sym.bind(mx.cpu(), {}).forward()[0].asnumpy()
    store[f"{case}/spec"] = np.array(json.dumps(dict(op="_linspace", params=params)))

# _histogram (mx.sym.histogram): counts and edges, with a bin count over a range and with given edges
rng = np.random.default_rng(20261123)
data = np.concatenate([rng.uniform(-1, 4, 40), [0.0, 3.0, 3.0, -1.0]]).astype(np.float32)
edges = np.array([0.0, 0.5, 1.0, 2.5, 3.0], np.float32)
a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
for case, sym, args, params in [
        ("hist_count", mx.sym.histogram(a, bins=6, range=(0, 3)), {"a": data}, dict(bin_cnt=6, range=(0, 3))),
        ("hist_edges", mx.sym.histogram(a, bins=b), {"a": data, "b": edges}, {})]:
    outs = sym.bind(mx.cpu(), {k: mx.nd.array(v) for k, v in args.items()}).forward()
    for i, v in enumerate(args.values()):
        store[f"{case}/in{i}"] = v
    for i, o in enumerate(outs):
        store[f"{case}/out{i}"] = o.asnumpy()
    store[f"{case}/spec"] = np.array(json.dumps(dict(op="_histogram", params=params)))
np.savez(HERE / "mxnet_ref.npz", **store)
