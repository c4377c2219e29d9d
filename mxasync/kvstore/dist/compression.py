"""2-bit gradient compression with error feedback (MXNet's ``set_gradient_compression``).

Each worker adds its gradient to a residual, sends +threshold where the residual
reached ``threshold``, -threshold where it reached ``-threshold`` and 0
elsewhere, and keeps the rest in the residual for the next round.  The codes
travel at 2 bits per value (16x fewer bytes than float32): an Allgather of the
packed codes, after which every worker decodes and sums the same codes, so all
copies stay equal.

>>> import numpy as np
>>> res = np.zeros(5, np.float32)
>>> packed = quantize_2bit(np.array([0.6, -0.7, 0.2, 0.5, -0.1], np.float32), res, 0.5)
>>> dequantize_sum_2bit(packed[None], 5, 0.5).tolist(), [round(float(r), 2) for r in res]
([0.5, -0.5, 0.0, 0.5, 0.0], [0.1, -0.2, 0.2, 0.0, -0.1])
"""

from __future__ import annotations

import numpy as np

from ...base import MXNetError
from ...ndarray.ndarray import NDArray
from ...runtime.engine import Engine
from .collective import ALLGATHER, Collective, push_collective
from .comm import Comm

__all__ = ["GradientCompression", "quantize_2bit", "dequantize_sum_2bit"]

_SHIFTS = np.array([0, 2, 4, 6], np.uint8)


def quantize_2bit(grad: np.ndarray, residual: np.ndarray, threshold: float) -> np.ndarray:
    """Add ``grad`` to ``residual`` (in place) and return the packed codes, 4 values a byte."""
    residual += grad.reshape(-1)
    pos = residual >= threshold
    neg = residual <= -threshold
    residual[pos] -= threshold
    residual[neg] += threshold
    codes = pos.astype(np.uint8) | (neg.astype(np.uint8) << 1)
    pad = -codes.size % 4
    if pad:
        codes = np.concatenate([codes, np.zeros(pad, np.uint8)])
    return np.bitwise_or.reduce(codes.reshape(-1, 4) << _SHIFTS, axis=1).astype(np.uint8)


def dequantize_sum_2bit(packed: np.ndarray, size: int, threshold: float) -> np.ndarray:
    """Sum over the first axis of ``packed`` (one row per worker) of the decoded values."""
    codes = (packed[..., None] >> _SHIFTS) & 3
    codes = codes.reshape(packed.shape[0], -1)[:, :size]
    count = (codes == 1).sum(axis=0, dtype=np.int32) - (codes == 2).sum(axis=0, dtype=np.int32)
    return count.astype(np.float32) * np.float32(threshold)


class GradientCompression:
    """Per-key residuals and code buffers of one store."""

    def __init__(self, threshold: float) -> None:
        if threshold <= 0:
            raise MXNetError(f"set_gradient_compression: threshold must be positive, got {threshold}")
        self.threshold = float(threshold)
        self._bufs: dict = {}

    @classmethod
    def create(cls, params: dict) -> GradientCompression | None:
        params = dict(params)
        kind = str(params.pop("type", "none")).lower()
        threshold = float(params.pop("threshold", 0.5))
        if params:
            raise MXNetError(f"set_gradient_compression: unknown parameters {sorted(params)}")
        if kind == "none":
            return None
        if kind != "2bit":
            raise MXNetError(f"set_gradient_compression: type must be '2bit' or 'none', got {kind!r}")
        return cls(threshold)

    def allreduce(self, comm: Comm, key, dst: NDArray, round_: int, priority: int) -> None:
        """Replace ``dst`` (this worker's sum) by the sum over workers of the 2-bit-coded values."""
        if np.dtype(dst.dtype) != np.float32:
            raise MXNetError(f"2-bit compression of key {key!r}: float32 only, got {dst.dtype}")
        engine = Engine.get()
        bufs = self._bufs.get(key)
        if bufs is None:
            size = dst.size
            packed = np.zeros((size + 3) // 4, np.uint8)
            bufs = self._bufs[key] = (np.zeros(size, np.float32), packed,
                                      np.zeros((comm.size, packed.size), np.uint8),
                                      engine.new_variable(name=f"2bit[{key}]"),
                                      engine.new_variable(name=f"2bit_gathered[{key}]"))
        residual, packed, gathered, var, gvar = bufs
        data, threshold = dst._data, self.threshold

        def encode(rctx) -> None:
            packed[...] = quantize_2bit(data, residual, threshold)

        def decode(rctx) -> None:
            data.reshape(-1)[...] = dequantize_sum_2bit(gathered, residual.size, threshold)

        engine.push_sync(encode, dst.context, [dst._chunk.var], [var], priority=priority, name=f"2bit_encode[{key}]")
        comm.push_count += 1
        task = Collective(ALLGATHER, key=key, buf=packed, recv=gathered, round_=round_, count=comm.push_count)
        push_collective(comm, task, dst.context, [var], [gvar], priority)
        engine.push_sync(decode, dst.context, [gvar], [dst._chunk.var], priority=priority,
                         name=f"2bit_decode[{key}]")
