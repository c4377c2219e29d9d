"""Graph nodes: a variable or an op applied to input entries.

An *entry* is ``(node, output_index, version)``; ``version`` counts how often a
variable was mutated before this use (NNVM's rule, written to symbol JSON).
Attributes are kept as the strings symbol JSON stores; op params are parsed
from them on demand through the registry (``prop``).
"""

from __future__ import annotations

from ..base import MXAsyncError
from ..operator.registry import OpDef
from ._json_format import HIDDEN_KEYS

__all__ = ["Node", "Entry", "is_hidden", "topo_order", "op_params", "hide_keys", "shown_attrs"]

Entry = tuple  # (Node, int, int)


def is_hidden(key: str) -> bool:
    """``__shape__``, ``__lr_mult__``...: attributes that are not op params."""
    return len(key) > 4 and key.startswith("__") and key.endswith("__")


def hide_keys(attrs: dict[str, str]) -> dict[str, str]:
    """MXNet's rule: ``lr_mult``, ``wd_mult``, ``ctx_group``, ... are stored as ``__lr_mult__``, never as op params."""
    return {(f"__{k}__" if k in HIDDEN_KEYS else k): v for k, v in attrs.items()}


def shown_attrs(attrs: dict[str, str]) -> dict[str, str]:
    """The attributes as MXNet lists them: the hidden keys ``__lr_mult__`` also as ``lr_mult``."""
    out = dict(attrs)
    for k in HIDDEN_KEYS:
        if f"__{k}__" in attrs:
            out[k] = attrs[f"__{k}__"]
    return out


def op_params(attrs: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in attrs.items() if not is_hidden(k)}


class Node:
    """One graph node; ``op`` is None for a variable."""

    __slots__ = ("op", "name", "attrs", "inputs", "version", "_prop")

    def __init__(self, op: OpDef | None, name: str, attrs: dict[str, str] | None = None,
                 inputs: list[Entry] | None = None):
        self.op = op
        self.name = name
        self.attrs = dict(attrs or {})
        self.inputs: list[Entry] = list(inputs or [])
        self.version = 0
        self._prop = None

    @property
    def is_variable(self) -> bool:
        return self.op is None

    @property
    def prop(self):
        """The op's :class:`~mxasync.operator.OperatorProperty` for this node's params (cached)."""
        prop = self._prop
        if prop is None:
            if self.op is None:
                raise MXAsyncError(f"variable {self.name!r} has no operator")
            prop = self._prop = self.op.prepare(name=self.name, **op_params(self.attrs))
        return prop

    def num_outputs(self) -> int:
        return 1 if self.op is None else self.prop.num_outputs()

    def num_visible(self) -> int:
        return 1 if self.op is None else self.prop.num_visible_outputs()

    def num_args(self) -> int:
        return len(self.prop.list_arguments())

    def output_name(self, index: int) -> str:
        if self.op is None:
            return self.name
        return f"{self.name}_{self.prop.list_outputs()[index]}"

    def mutable_positions(self) -> list[int]:
        """Input positions the op writes: aux states and declared in-place inputs."""
        if self.op is None:
            return []
        prop = self.prop
        n = len(prop.list_arguments())
        return sorted(set(prop.mutate_inputs()) | set(range(n, n + len(prop.list_auxiliary_states()))))

    def copy(self) -> Node:
        node = Node(self.op, self.name, self.attrs, self.inputs)
        node.version = self.version
        node._prop = self._prop
        return node

    def __repr__(self) -> str:
        return f"<Node {self.op.name if self.op else 'Variable'} {self.name}>"


def topo_order(heads: list) -> list[Node]:
    """Nodes reachable from ``heads`` (entries or nodes) in DFS post-order, inputs in order (NNVM's)."""
    order: list[Node] = []
    seen: set[int] = set()
    for head in heads:
        root = head[0] if isinstance(head, tuple) else head
        if id(root) in seen:
            continue
        seen.add(id(root))
        stack = [(root, 0)]
        while stack:
            node, i = stack[-1]
            if i < len(node.inputs):
                stack[-1] = (node, i + 1)
                child = node.inputs[i][0]
                if id(child) not in seen:
                    seen.add(id(child))
                    stack.append((child, 0))
            else:
                stack.pop()
                order.append(node)
    return order
