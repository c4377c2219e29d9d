"""Record how MXNet 1.9.1 treats NaN in max Pooling and in Activation(relu) (tests/operator/test_nan_semantics.py).

Run with MXNet 1.9.1 (``/work/venvs/mx191/bin/python tests/operator/fixtures_nan/make_fixtures.py``);
writes ``mxnet_ref.npz`` beside this file: the inputs (``CASE/x``), MXNet's outputs (``CASE/out``) and,
for relu, the gradient under a head of ones (``CASE/grad``).
"""

from __future__ import annotations

from pathlib import Path

import mxnet as mx
import numpy as np


def _data(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, shape)
    x[rng.uniform(size=shape) < 0.4] = np.nan
    x.reshape(-1)[:4] = np.nan  # at least one window made only of NaNs
    return x.astype(dtype)


POOL = {
    "pool2d_2x2": ((2, 3, 6, 6), "float32", dict(kernel=(2, 2), stride=(2, 2))),
    "pool2d_3x3_pad": ((1, 2, 7, 7), "float32", dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1))),
    "pool2d_full": ((1, 2, 7, 7), "float32", dict(kernel=(3, 3), stride=(2, 2), pooling_convention="full")),
    "pool2d_global": ((2, 3, 5, 5), "float32", dict(kernel=(1, 1), global_pool=True)),
    "pool1d": ((1, 2, 9), "float32", dict(kernel=(3,), stride=(2,))),
    "pool3d": ((1, 1, 4, 4, 4), "float32", dict(kernel=(2, 2, 2), stride=(2, 2, 2))),
    "pool2d_f64": ((1, 2, 6, 6), "float64", dict(kernel=(2, 2), stride=(2, 2))),
    "pool2d_f16": ((1, 2, 6, 6), "float16", dict(kernel=(2, 2), stride=(2, 2))),
}
RELU = {"relu_f32": "float32", "relu_f16": "float16", "relu_f64": "float64"}


def main() -> None:
    out = {}
    for i, (name, (shape, dtype, kw)) in enumerate(sorted(POOL.items())):
        x = _data(shape, dtype, i)
        out[f"{name}/x"] = x
        out[f"{name}/out"] = mx.nd.Pooling(mx.nd.array(x, dtype=dtype), pool_type="max", **kw).asnumpy()
    for i, (name, dtype) in enumerate(sorted(RELU.items())):
        x = _data((3, 50), dtype, 100 + i)
        out[f"{name}/x"] = x
        data = mx.nd.array(x, dtype=dtype)
        data.attach_grad()
        with mx.autograd.record():
            y = mx.nd.Activation(data, act_type="relu")
        y.backward(mx.nd.ones_like(y))
        out[f"{name}/out"] = y.asnumpy()
        out[f"{name}/grad"] = data.grad.asnumpy()
    np.savez(Path(__file__).parent / "mxnet_ref.npz", **out)


if __name__ == "__main__":
    main()
