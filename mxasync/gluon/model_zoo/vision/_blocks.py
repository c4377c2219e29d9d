"""Pieces the model zoo shares: ``contrib.nn``'s HybridConcurrent and Identity (the same classes, as in MXNet), and the
pretrained loader."""

from __future__ import annotations

from ....context import cpu
from ...contrib.nn.basic_layers import HybridConcurrent, Identity

__all__ = ["HybridConcurrent", "Identity", "load_pretrained"]


def load_pretrained(net, name: str, root=None, ctx=None):
    """Load ``<root>/<name>-<hash>.params`` into ``net`` (see :func:`..model_store.get_model_file`)."""
    from ..model_store import get_model_file

    net.load_parameters(get_model_file(name, root=root), ctx=ctx if ctx is not None else cpu())
    return net
