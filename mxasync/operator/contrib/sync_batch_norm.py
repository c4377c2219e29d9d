"""``_contrib_SyncBatchNorm``: BatchNorm whose batch statistics MXNet reduces over ``ndev`` devices.

On one device (``ndev=1``, what ``gluon.contrib.nn.SyncBatchNorm`` passes when ``num_devices`` is
None) it is BatchNorm over axis 1. Shards of one batch on several devices of one process are not
reduced together here: ``ndev > 1`` is refused at shape inference, naming the op.

>>> import mxasync as mx
>>> x = mx.nd.array([[1.0, 2.0], [3.0, 6.0]])
>>> y = mx.nd.contrib.SyncBatchNorm(x, mx.nd.ones((2,)), mx.nd.zeros((2,)), mx.nd.zeros((2,)),
...                                 mx.nd.ones((2,)), fix_gamma=False, key="bn0")
>>> y.shape
(2, 2)
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from ..nn.batch_norm import BatchNormProperty
from ..params import OpParam
from ..registry import register_op

__all__ = ["SyncBatchNormParam"]


class SyncBatchNormParam(OpParam):
    eps: float = 1e-3
    momentum: float = 0.9
    fix_gamma: bool = True
    use_global_stats: bool = False
    output_mean_var: bool = False
    ndev: int = Field(1, ge=1, description="the number of devices whose batch statistics are reduced together")
    key: str = Field("", description="the name that ties the op's copies on the devices together")
    axis: ClassVar[int] = 1  # MXNet's SyncBatchNorm normalises over the channel axis 1 only


@register_op("_contrib_SyncBatchNorm", param=SyncBatchNormParam)
class SyncBatchNormProperty(BatchNormProperty):
    """BatchNorm over axis 1 with statistics reduced across ``ndev`` devices under ``key``."""

    def infer_shape(self, in_shapes):
        if self.params.ndev > 1:
            raise self.error(f"ndev={self.params.ndev}: mxasync reduces the statistics of one device only; split "
                             "the batch per process (dist kvstore) or use ndev=1")
        return super().infer_shape(in_shapes)
