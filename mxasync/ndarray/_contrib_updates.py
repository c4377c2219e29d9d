"""MXNet's Python wrappers of the AdamW and fused LAMB update ops in ``mx.nd.contrib``:
``adamw_update``, ``mp_adamw_update``, ``multi_adamw_update``, ``multi_mp_adamw_update`` (a number
for ``rescale_grad`` becomes the one-element array the ops take) and ``multi_lamb_update``,
``multi_mp_lamb_update`` (lists of weights, gradients and states interleaved for the op)."""

from __future__ import annotations

from . import _internal
from ._creation import full
from .ndarray import NDArray

__all__ = ["adamw_update", "mp_adamw_update", "multi_adamw_update", "multi_mp_adamw_update", "multi_lamb_update",
           "multi_mp_lamb_update"]


def flatten_groups(*lists) -> list:
    """``[w0, g0, m0, v0, w1, g1, ...]`` from the lists ``[w0, w1], [g0, g1], ...``."""
    return [x for group in zip(*lists, strict=True) for x in group]


def _rescale(rescale_grad, ctx) -> NDArray:
    if isinstance(rescale_grad, NDArray):
        return rescale_grad.as_in_context(ctx)
    return full((1,), rescale_grad, ctx=ctx)


def adamw_update(weight, grad, mean, var, rescale_grad, lr, eta, beta1=0.9, beta2=0.999, epsilon=1e-8, wd=0,
                 clip_gradient=-1, out=None, name=None, **kwargs):
    """``_adamw_update`` with ``rescale_grad`` a number or an array (skipped when NaN, inf or 0)."""
    return _internal._adamw_update(weight, grad, mean, var, _rescale(rescale_grad, weight.context), lr=lr, eta=eta,
                         beta1=beta1, beta2=beta2, epsilon=epsilon, wd=wd, clip_gradient=clip_gradient, out=out,
                         name=name, **kwargs)


def mp_adamw_update(weight, grad, mean, var, weight32, rescale_grad, lr, eta, beta1=0.9, beta2=0.999, epsilon=1e-8,
                    wd=0, clip_gradient=-1, out=None, name=None, **kwargs):
    """``_mp_adamw_update``: AdamW on the float32 master ``weight32``."""
    return _internal._mp_adamw_update(weight, grad, mean, var, weight32, _rescale(rescale_grad, weight.context), lr=lr,
                            eta=eta, beta1=beta1, beta2=beta2, epsilon=epsilon, wd=wd, clip_gradient=clip_gradient,
                            out=out, name=name, **kwargs)


def multi_adamw_update(weights, grads, mean, var, rescale_grad, lrs, wds, etas, out=None, name=None, size=0,
                       **kwargs):
    """``_multi_adamw_update`` over lists (``size`` weights; default all)."""
    inputs = flatten_groups(weights, grads, mean, var) + [_rescale(rescale_grad, weights[0].context)]
    return _internal._multi_adamw_update(*inputs, out=out, num_weights=size or len(weights), lrs=lrs, wds=wds, etas=etas,
                               name=name, **kwargs)


def multi_mp_adamw_update(weights, grads, mean, var, weights32, rescale_grad, lrs, wds, etas, out=None, name=None,
                          size=0, **kwargs):
    """``_multi_mp_adamw_update`` over lists, with float32 master weights ``weights32``."""
    inputs = flatten_groups(weights, grads, mean, var, weights32) + [_rescale(rescale_grad, weights[0].context)]
    return _internal._multi_mp_adamw_update(*inputs, out=out, num_weights=size or len(weights), lrs=lrs, wds=wds, etas=etas,
                                  name=name, **kwargs)


def multi_lamb_update(weights, grads, mean, var, step_count, lrs, wds, out=None, num_tensors=0, **kwargs):
    """``_multi_lamb_update`` over lists: ``step_count``, ``lrs``, ``wds`` one value per tensor."""
    return _internal._multi_lamb_update(*flatten_groups(weights, grads, mean, var), out=out,
                              num_tensors=num_tensors or len(weights), step_count=step_count, learning_rates=lrs,
                              wds=wds, **kwargs)


def multi_mp_lamb_update(weights, grads, mean, var, weights32, step_count, lrs, wds, out=None, num_tensors=0,
                         **kwargs):
    """``_multi_mp_lamb_update`` over lists, with float32 master weights ``weights32`` (updated in place)."""
    return _internal._multi_mp_lamb_update(*flatten_groups(weights, grads, mean, var, weights32), out=out,
                                 num_tensors=num_tensors or len(weights), step_count=step_count, learning_rates=lrs,
                                 wds=wds, **kwargs)
