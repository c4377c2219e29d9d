"""Minimal layers with MXNet's class and parameter names, so these tests do not depend on ``gluon.nn``.

``Dense`` and ``BatchNorm`` name and shape their parameters as MXNet 1.9.1's
``nn.Dense``/``nn.BatchNorm`` do, so files recorded with MXNet load into them.
"""

from __future__ import annotations

from mxasync import gluon


class Dense(gluon.HybridBlock):
    def __init__(self, units, activation=None, in_units=0, use_bias=True, flatten=True, **kwargs):
        super().__init__(**kwargs)
        self._units, self._act, self._flatten = units, activation, flatten
        with self.name_scope():
            self.weight = self.params.get("weight", shape=(units, in_units), allow_deferred_init=True)
            self.bias = (self.params.get("bias", shape=(units,), init="zeros", allow_deferred_init=True)
                         if use_bias else None)

    def hybrid_forward(self, F, x, weight, bias=None):
        y = F.FullyConnected(x, weight, bias, no_bias=bias is None, num_hidden=self._units, flatten=self._flatten,
                             name="fwd")
        return F.Activation(y, act_type=self._act) if self._act else y


class BatchNorm(gluon.HybridBlock):
    def __init__(self, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.gamma = self.params.get("gamma", shape=(in_channels,), init="ones", allow_deferred_init=True)
            self.beta = self.params.get("beta", shape=(in_channels,), init="zeros", allow_deferred_init=True)
            self.running_mean = self.params.get("running_mean", grad_req="null", shape=(in_channels,),
                                                init="zeros", allow_deferred_init=True, differentiable=False)
            self.running_var = self.params.get("running_var", grad_req="null", shape=(in_channels,),
                                               init="ones", allow_deferred_init=True, differentiable=False)

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        return F.BatchNorm(x, gamma, beta, running_mean, running_var, eps=1e-5, momentum=0.9, fix_gamma=False,
                           name="fwd")


class Dropout(gluon.HybridBlock):
    def __init__(self, rate, **kwargs):
        super().__init__(**kwargs)
        self._rate = rate

    def hybrid_forward(self, F, x):
        return F.Dropout(x, p=self._rate, name="fwd")


def mlp(units=(6, 3), batchnorm=True):
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(Dense(units[0], activation="relu"))
        if batchnorm:
            net.add(BatchNorm())
        net.add(Dense(units[1]))
    return net
