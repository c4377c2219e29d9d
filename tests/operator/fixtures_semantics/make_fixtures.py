"""Regenerate the MXNet 1.9.1 reference fixtures of ``tests/operator/test_mxnet_semantics.py``. Run by hand only:

    /work/venvs/mx191/bin/python tests/operator/fixtures_semantics/make_fixtures.py

It needs the real ``mxnet`` 1.9.1 (never a dependency of mxasync). Each LeakyReLU case runs the op
under ``mx.autograd`` with a fixed head gradient and stores ``<case>/<name>`` arrays (inputs ``in0``,
``in1``, output ``out0``, head ``head0``, input gradients ``grad0``, ``grad1``) and a ``<case>/spec``
JSON string (the params). The ``reduce_*`` cases store integer reductions (``in0``, ``out0``) whose
sums overflow their dtype.
"""

from __future__ import annotations

import json
from pathlib import Path

import mxnet as mx
import numpy as np

HERE = Path(__file__).resolve().parent
rng = np.random.default_rng(20261127)
store: dict[str, np.ndarray] = {}


def leaky(case: str, inputs: list[np.ndarray], params: dict) -> None:
    xs = [mx.nd.array(x, dtype=x.dtype) for x in inputs]
    for x in xs:
        x.attach_grad()
    with mx.autograd.record():
        out = mx.nd.LeakyReLU(*xs, **params)
    head = mx.nd.array(rng.uniform(0.5, 1.5, out.shape).astype(np.float32))
    out.backward(head)
    for i, x in enumerate(inputs):
        store[f"{case}/in{i}"] = x
        store[f"{case}/grad{i}"] = xs[i].grad.asnumpy()
    store[f"{case}/out0"] = out.asnumpy()
    store[f"{case}/head0"] = head.asnumpy()
    store[f"{case}/spec"] = np.array(json.dumps(params))


def uniform(*shape: int) -> np.ndarray:
    x = rng.uniform(-1, 1, shape).astype(np.float32)
    x[np.abs(x) < 1e-3] = 0.5  # away from the kink
    return x


# prelu: gamma lines up with data's axes 1 and 0 (MXNet's expand_shape), its gradient summed back
for dshape, gshape in [((3, 4), (4,)), ((3, 4), (3, 4)), ((3, 4, 4, 5), (4,)), ((3, 4, 4, 5), (3, 4)),
                       ((3, 4), (1,)), ((2, 3, 5), (3,)), ((2, 3, 5), (2, 3)), ((4,), (4,))]:
    name = "prelu_" + "x".join(map(str, dshape)) + "_g" + "x".join(map(str, gshape))
    leaky(name, [uniform(*dshape), rng.uniform(0.1, 0.5, gshape).astype(np.float32)], dict(act_type="prelu"))
# the other act types (rrelu's inference gradient reads a mask MXNet never writes: not recorded)
for act in ("elu", "selu", "gelu", "leaky"):
    leaky(f"act_{act}", [uniform(3, 4, 5)], dict(act_type=act, slope=0.3))

# integer reductions accumulate in the input's dtype and wrap around; mean truncates toward zero
for dtype in ("int8", "uint8", "int32"):
    x = np.array([[120, 100, 7], [-128, -1, 5], [90, 90, -7]]).astype(dtype)
    for op, axis in (("sum", None), ("sum", 1), ("prod", 0), ("mean", 1), ("mean", None), ("nansum", 0)):
        case = f"reduce_{op}_{dtype}_{axis}"
        store[f"{case}/in0"] = x
        store[f"{case}/out0"] = getattr(mx.nd, op)(mx.nd.array(x, dtype=dtype), axis=axis).asnumpy()
        store[f"{case}/spec"] = np.array(json.dumps(dict(op=op, axis=axis)))

np.savez_compressed(HERE / "mxnet_ref.npz", **store)
print(f"wrote {len(store)} arrays to {HERE / 'mxnet_ref.npz'}")
