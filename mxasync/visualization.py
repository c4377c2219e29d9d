"""``mxnet.visualization``, MXNet's module name for ``mx.viz`` (the same functions)."""

from __future__ import annotations

from .viz import plot_network, print_summary

__all__ = ["plot_network", "print_summary"]
