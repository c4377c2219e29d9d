"""2-bit compression on dist_sync: the pulled sums equal a numpy replay of every worker's codes."""

from __future__ import annotations

import numpy as np

import mxasync as mx
from mxasync import kvstore
from mxasync.kvstore.dist.compression import dequantize_sum_2bit, quantize_2bit

THRESHOLD = 0.5
SHAPE = (7, 5)  # 35 values: the last code byte is padded


def grad_of(rank: int, step: int) -> np.ndarray:
    return np.random.default_rng(100 * rank + step).uniform(-1, 1, SHAPE).astype(np.float32)


def main() -> None:
    kv = kvstore.create("dist_sync")
    kv.set_gradient_compression({"type": "2bit", "threshold": THRESHOLD})
    kv.init("g", mx.nd.zeros(SHAPE))
    n = kv.num_workers
    residuals = [np.zeros(int(np.prod(SHAPE)), np.float32) for _ in range(n)]
    out = mx.nd.zeros(SHAPE)
    for step in range(4):
        kv.push("g", mx.nd.array(grad_of(kv.rank, step)))
        kv.pull("g", out=out)
        codes = np.stack([quantize_2bit(grad_of(r, step), residuals[r], THRESHOLD) for r in range(n)])
        expected = dequantize_sum_2bit(codes, residuals[0].size, THRESHOLD).reshape(SHAPE)
        np.testing.assert_allclose(out.asnumpy(), expected)
    print(f"worker {kv.rank}: 2bit ok", flush=True)


if __name__ == "__main__":
    main()
