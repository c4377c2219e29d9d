"""``check_gluon_hybridize_consistency``: a HybridBlock gives the same outputs and input gradients
imperatively and hybridized (MXNet's helper of ``mx.test_utils``).

>>> import mxasync as mx
>>> class Double(mx.gluon.HybridBlock):
...     def hybrid_forward(self, F, x):
...         return x * 2
>>> check_gluon_hybridize_consistency(lambda prefix=None: Double(prefix=prefix), [mx.nd.ones((2, 3))],
...                                   numpy_func=lambda x: x * 2)
"""

from __future__ import annotations

from typing import Any

from .. import autograd
from .. import initializer as init
from .compare import assert_almost_equal

__all__ = ["check_gluon_hybridize_consistency"]


class _Saved(init.Initializer):
    """Gives every parameter the values the first block built had (by parameter name)."""

    def __init__(self, values: dict) -> None:
        super().__init__()
        self._values = values

    def _init_weight(self, name, arr) -> None:
        arr[()] = self._values[name]


def check_gluon_hybridize_consistency(net_builder, data_l: list, numpy_func=None, test_grad: bool = True,
                                      rtol: float = 1e-4, atol: float = 1e-4) -> None:
    """Build the block with ``net_builder(prefix='net_')`` four times (imperative and hybridized, each with
    and without ``autograd.record()`` when ``test_grad``), every one with the first one's parameter
    values, on copies of ``data_l``; the outputs must agree, the inputs' gradients (backward seeded with
    the output) too, and with ``numpy_func(*inputs as numpy)`` when given.  The block must not draw
    random numbers."""
    saved_out: Any = None
    saved_grads: list | None = None
    start = None
    for hybridize in (False, True):
        for use_autograd in ((False, True) if test_grad else (False,)):
            net = net_builder(prefix="net_")
            net.initialize(start)
            if hybridize:
                net.hybridize()
            ins = [x.copy() for x in data_l]
            if use_autograd:
                for x in ins:
                    x.attach_grad()
                with autograd.record():
                    out = net(*ins)
                out.backward(out)
            else:
                out = net(*ins)
            if start is None:
                start = _Saved({k: v.data().asnumpy() for k, v in net.collect_params().items()})
            if saved_out is None:
                saved_out = out.asnumpy()
            else:
                assert_almost_equal(out.asnumpy(), saved_out, rtol=rtol, atol=atol)
            if use_autograd:
                grads = [x.grad.asnumpy() for x in ins]
                if saved_grads is None:
                    saved_grads = grads
                else:
                    for g, s in zip(grads, saved_grads, strict=True):
                        assert_almost_equal(g, s, rtol=rtol, atol=atol)
    if numpy_func is not None:
        assert_almost_equal(saved_out, numpy_func(*[x.asnumpy() for x in data_l]), rtol=rtol, atol=atol)
