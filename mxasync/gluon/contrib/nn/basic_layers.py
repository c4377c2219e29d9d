"""``Concurrent`` / ``HybridConcurrent`` (children side by side, outputs concatenated), ``Identity``
and ``SyncBatchNorm``.

>>> import mxasync as mx
>>> net = HybridConcurrent(axis=1)
>>> net.add(mx.gluon.nn.Dense(3, in_units=2), Identity())
>>> net.initialize()
>>> net(mx.nd.ones((4, 2))).shape
(4, 5)
"""

from __future__ import annotations

from .... import ndarray as nd
from ...block import HybridBlock
from ...nn.basic_layers import BatchNorm
from ...nn.sequential import HybridSequential, Sequential

__all__ = ["Concurrent", "HybridConcurrent", "Identity", "SyncBatchNorm"]


class Concurrent(Sequential):
    """Runs every child on the same input and concatenates their outputs along ``axis``."""

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def forward(self, x):
        return nd.concat(*[block(x) for block in self._children.values()], dim=self.axis)


class HybridConcurrent(HybridSequential):
    """:class:`Concurrent` for HybridBlocks (hybridizes into one graph)."""

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def hybrid_forward(self, F, x):
        return F.concat(*[block(x) for block in self._children.values()], dim=self.axis)


class Identity(HybridBlock):
    """Returns its input (a placeholder branch in a :class:`HybridConcurrent`)."""

    def hybrid_forward(self, F, x):
        return x


class SyncBatchNorm(BatchNorm):
    """BatchNorm whose batch statistics are taken over ``num_devices`` devices (MXNet's
    ``contrib.SyncBatchNorm`` op). In one process the devices' shards are reduced by the op under a
    shared ``key``; with one device it is BatchNorm."""

    def __init__(self, in_channels=0, num_devices=None, momentum=0.9, epsilon=1e-5, center=True, scale=True,
                 use_global_stats=False, beta_initializer="zeros", gamma_initializer="ones",
                 running_mean_initializer="zeros", running_variance_initializer="ones", **kwargs):
        super().__init__(axis=1, momentum=momentum, epsilon=epsilon, center=center, scale=scale,
                         use_global_stats=use_global_stats, beta_initializer=beta_initializer,
                         gamma_initializer=gamma_initializer, running_mean_initializer=running_mean_initializer,
                         running_variance_initializer=running_variance_initializer, in_channels=in_channels,
                         **kwargs)
        self._kwargs.pop("axis", None)
        self._kwargs.update(ndev=1 if num_devices is None else num_devices, key=self.prefix)

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        return F.contrib.SyncBatchNorm(x, gamma, beta, running_mean, running_var, name="fwd", **self._kwargs)
