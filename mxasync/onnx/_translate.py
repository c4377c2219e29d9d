"""What the ONNX translator tables share: registering a translator under its ONNX op types, and
reading a node's inputs and name through the importer."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["registrar", "node_input", "node_name"]


def registrar(table: dict) -> Callable:
    """A decorator factory: ``@reg("Relu", "Sigmoid")`` stores the function in ``table`` under each name."""

    def reg(*names: str) -> Callable:
        def deco(fn: Callable) -> Callable:
            for n in names:
                table[n] = fn
            return fn

        return deco

    return reg


def node_input(imp, node, i: int):
    """The symbol of ``node``'s ``i``-th input."""
    return imp.sym(node.input[i])


def node_name(imp, node) -> str:
    """A unique symbol name for ``node``."""
    return imp.unique(node.name)
