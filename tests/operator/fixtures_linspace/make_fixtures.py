"""Record MXNet 1.9.1's ``_linspace`` (mx.sym.linspace) values and dtypes. By hand only:

    /work/mxref/bin/python tests/operator/fixtures_linspace/make_fixtures.py

Per case ``<case>/out0`` and ``<case>/spec`` (the params as JSON), into ``mxnet_ref.npz``.
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
np.savez(HERE / "mxnet_ref.npz", **store)
