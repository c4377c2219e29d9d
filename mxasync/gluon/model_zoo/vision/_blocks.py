"""Pieces the model zoo shares: MXNet's ``contrib.nn`` HybridConcurrent and Identity, and the pretrained loader."""

from __future__ import annotations

from ....context import cpu
from ...block import HybridBlock
from ...nn import HybridSequential

__all__ = ["HybridConcurrent", "Identity", "load_pretrained"]


class HybridConcurrent(HybridSequential):
    """Feed the input to every child and concatenate their outputs on ``axis``."""

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def hybrid_forward(self, F, x):
        return F.concat(*[block(x) for block in self._children.values()], dim=self.axis)


class Identity(HybridBlock):
    """Pass the input through (the shortcut branch of a HybridConcurrent)."""

    def hybrid_forward(self, F, x):
        return x


def load_pretrained(net, name: str, root=None, ctx=None):
    """Load ``<root>/<name>-<hash>.params`` into ``net`` (see :func:`..model_store.get_model_file`)."""
    from ..model_store import get_model_file

    net.load_parameters(get_model_file(name, root=root), ctx=ctx if ctx is not None else cpu())
    return net
