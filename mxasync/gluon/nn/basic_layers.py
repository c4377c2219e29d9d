"""Basic Gluon layers: Dense, Dropout, BatchNorm, InstanceNorm, LayerNorm, GroupNorm, Embedding, Flatten.

MXNet 1.9.1's layers: the same constructor arguments, parameter names (``weight``, ``bias``,
``gamma``, ``beta``, ``running_mean``, ``running_var``) and auto-prefixes (``dense0_``,
``batchnorm0_``), so parameter files move between MXNet and mxasync.  A size given as 0
(``in_units``, ``in_channels``) is inferred from the first input (deferred initialisation).

>>> from mxasync.gluon import nn
>>> layer = nn.Dense(3, in_units=4)
>>> layer
Dense(4 -> 3, linear)
>>> sorted(layer.collect_params().keys())  # doctest: +SKIP
['dense0_bias', 'dense0_weight']
"""

from __future__ import annotations

import numpy as np

from ..block import HybridBlock
from .activations import Activation

__all__ = ["Dense", "Dropout", "BatchNorm", "BatchNormReLU", "InstanceNorm", "LayerNorm", "GroupNorm",
           "Embedding", "Flatten"]


def _kwargs_repr(kwargs: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in kwargs.items())


class Dense(HybridBlock):
    """Fully connected layer: ``activation(dot(x, weight.T) + bias)``.

    ``flatten=True`` collapses all axes but the first; ``flatten=False`` applies to the last axis.
    """

    def __init__(self, units, activation=None, use_bias=True, flatten=True, dtype="float32",
                 weight_initializer=None, bias_initializer="zeros", in_units=0, **kwargs):
        super().__init__(**kwargs)
        self._flatten = flatten
        with self.name_scope():
            self._units = units
            self._in_units = in_units
            self.weight = self.params.get("weight", shape=(units, in_units), init=weight_initializer, dtype=dtype,
                                          allow_deferred_init=True)
            self.bias = (self.params.get("bias", shape=(units,), init=bias_initializer, dtype=dtype,
                                         allow_deferred_init=True) if use_bias else None)
            self.act = Activation(activation, prefix=activation + "_") if activation is not None else None

    def hybrid_forward(self, F, x, weight, bias=None):
        args = (x, weight) if bias is None else (x, weight, bias)
        out = F.FullyConnected(*args, no_bias=bias is None, num_hidden=self._units, flatten=self._flatten,
                               name="fwd")
        return self.act(out) if self.act is not None else out

    def __repr__(self):
        shape = self.weight.shape
        return f"{type(self).__name__}({shape[1] if shape[1] else None} -> {shape[0]}, " \
               f"{self.act if self.act else 'linear'})"


class Dropout(HybridBlock):
    """Zero a fraction ``rate`` of the input while training (scaling the rest); ``axes`` share the mask."""

    def __init__(self, rate, axes=(), **kwargs):
        super().__init__(**kwargs)
        self._rate = rate
        self._axes = axes

    def hybrid_forward(self, F, x):
        if self._rate > 0:
            return F.Dropout(x, p=self._rate, axes=self._axes, name="fwd", cudnn_off=False)
        return F.identity(x)

    def __repr__(self):
        return f"{type(self).__name__}(p = {self._rate}, axes={self._axes})"


class _BatchNorm(HybridBlock):
    """BatchNorm's layer; a subclass says whether ReLU follows (``_fuse_relu``)."""

    _fuse_relu = False

    def __init__(self, axis=1, momentum=0.9, epsilon=1e-5, center=True, scale=True, use_global_stats=False,
                 beta_initializer="zeros", gamma_initializer="ones", running_mean_initializer="zeros",
                 running_variance_initializer="ones", in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {"axis": axis, "eps": epsilon, "momentum": momentum, "fix_gamma": not scale,
                        "use_global_stats": use_global_stats}
        self.fuse_relu = self._fuse_relu
        if in_channels != 0:
            self.in_channels = in_channels
        shape = (in_channels,)
        self.gamma = self.params.get("gamma", grad_req="write" if scale else "null", shape=shape,
                                     init=gamma_initializer, allow_deferred_init=True, differentiable=scale)
        self.beta = self.params.get("beta", grad_req="write" if center else "null", shape=shape,
                                    init=beta_initializer, allow_deferred_init=True, differentiable=center)
        self.running_mean = self.params.get("running_mean", grad_req="null", shape=shape,
                                            init=running_mean_initializer, allow_deferred_init=True,
                                            differentiable=False)
        self.running_var = self.params.get("running_var", grad_req="null", shape=shape,
                                           init=running_variance_initializer, allow_deferred_init=True,
                                           differentiable=False)

    def cast(self, dtype):
        # MXNet keeps the statistics and affine parameters of a float16 network in float32
        if np.dtype(dtype).name == "float16":
            dtype = "float32"
        super().cast(dtype)

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        out = F.BatchNorm(x, gamma, beta, running_mean, running_var, name="fwd", **self._kwargs)
        return F.relu(out) if self.fuse_relu else out

    def __repr__(self):
        c = self.gamma.shape[0]
        return f"{type(self).__name__}({_kwargs_repr(self._kwargs)}, in_channels={c if c else None})"


class BatchNorm(_BatchNorm):
    """Batch normalisation over ``axis`` (1 for NCHW) with moving statistics ``running_mean``/``running_var``.

    ``scale=False`` fixes gamma at 1 (MXNet's ``fix_gamma``); ``center=False`` leaves beta untrained.
    """


class BatchNormReLU(_BatchNorm):
    """BatchNorm followed by ReLU (MXNet's fused layer; here the two ops in sequence)."""

    _fuse_relu = True


class Embedding(HybridBlock):
    """Map integer indices to rows of a ``(input_dim, output_dim)`` weight."""

    def __init__(self, input_dim, output_dim, dtype="float32", weight_initializer=None, sparse_grad=False,
                 **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {"input_dim": input_dim, "output_dim": output_dim, "dtype": dtype, "sparse_grad": sparse_grad}
        extra = {"grad_stype": "row_sparse"} if sparse_grad else {}
        self.weight = self.params.get("weight", shape=(input_dim, output_dim), init=weight_initializer, dtype=dtype,
                                      allow_deferred_init=True, **extra)

    def hybrid_forward(self, F, x, weight):
        return F.Embedding(x, weight, name="fwd", **self._kwargs)

    def __repr__(self):
        k = self._kwargs
        return f"{type(self).__name__}({k['input_dim']} -> {k['output_dim']}, {k['dtype']})"


class Flatten(HybridBlock):
    """Collapse all axes but the first: ``(N, a, b, ...) -> (N, a*b*...)``."""

    def hybrid_forward(self, F, x):
        return F.flatten(x)

    def __repr__(self):
        return type(self).__name__


class _AffineNorm(HybridBlock):
    """Shared parts of the per-sample norms: gamma/beta of a given shape, MXNet's repr."""

    def _affine(self, shape, kwargs, beta_initializer, gamma_initializer):
        """Keep the op's keyword arguments (``kwargs``: eps, center, scale and the layer's own; the repr shows
        them) and make gamma and beta of ``shape``, trained when ``scale`` / ``center``."""
        self._kwargs = kwargs
        self._epsilon, self._center, self._scale = kwargs["eps"], kwargs["center"], kwargs["scale"]
        self.gamma = self.params.get("gamma", grad_req="write" if self._scale else "null", shape=shape,
                                     init=gamma_initializer, allow_deferred_init=True)
        self.beta = self.params.get("beta", grad_req="write" if self._center else "null", shape=shape,
                                    init=beta_initializer, allow_deferred_init=True)

    def __repr__(self):
        return f"{type(self).__name__}({_kwargs_repr(self._kwargs)}, in_channels={self.gamma.shape[0]})"


class InstanceNorm(_AffineNorm):
    """Normalise each (sample, channel) over the other axes; ``axis`` names the channel axis."""

    def __init__(self, axis=1, epsilon=1e-5, center=True, scale=False, beta_initializer="zeros",
                 gamma_initializer="ones", in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self._axis = axis
        self._affine((in_channels,), {"eps": epsilon, "axis": axis, "center": center, "scale": scale},
                     beta_initializer, gamma_initializer)

    def hybrid_forward(self, F, x, gamma, beta):
        if self._axis == 1:
            return F.InstanceNorm(x, gamma, beta, name="fwd", eps=self._epsilon)
        x = x.swapaxes(1, self._axis)
        return F.InstanceNorm(x, gamma, beta, name="fwd", eps=self._epsilon).swapaxes(1, self._axis)


class LayerNorm(_AffineNorm):
    """Normalise along ``axis`` (default the last) per position, then scale and shift."""

    def __init__(self, axis=-1, epsilon=1e-5, center=True, scale=True, beta_initializer="zeros",
                 gamma_initializer="ones", in_channels=0, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._axis = axis
        self._affine((in_channels,), {"eps": epsilon, "axis": axis, "center": center, "scale": scale},
                     beta_initializer, gamma_initializer)

    def hybrid_forward(self, F, data, gamma, beta):
        return F.LayerNorm(data, gamma=gamma, beta=beta, axis=self._axis, eps=self._epsilon)


class GroupNorm(_AffineNorm):
    """Normalise each (sample, group of channels); gamma/beta have one value per group (MXNet 1.9)."""

    def __init__(self, num_groups=1, epsilon=1e-5, center=True, scale=True, beta_initializer="zeros",
                 gamma_initializer="ones", prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._num_groups = num_groups
        self._affine((num_groups,), {"eps": epsilon, "num_groups": num_groups, "center": center, "scale": scale},
                     beta_initializer, gamma_initializer)

    def hybrid_forward(self, F, data, gamma, beta):
        return F.GroupNorm(data, gamma=gamma, beta=beta, num_groups=self._num_groups, eps=self._epsilon)

    def __repr__(self):
        return f"{type(self).__name__}({_kwargs_repr(self._kwargs)})"
