"""``Symbol``: a list of output entries of a graph of :class:`~.node.Node`.

>>> from mxasync import symbol as sym
>>> net = sym.FullyConnected(sym.Variable("data"), num_hidden=4, name="fc1")
>>> net.list_arguments(), net.list_outputs()
(['data', 'fc1_weight', 'fc1_bias'], ['fc1_output'])
>>> net.get_internals().list_outputs()
['data', 'fc1_weight', 'fc1_bias', 'fc1_output']
"""

from __future__ import annotations

import numbers
from typing import Any

from .. import _seams
from ..base import MXAsyncError
from ._arith import ArithMixin
from ._node import Node, hide_keys, is_hidden, shown_attrs, topo_order

__all__ = ["Symbol", "Variable", "var", "Group"]


class Symbol(ArithMixin):
    """Symbolic outputs; compose with call, inspect with ``list_*``, bind to run (``simple_bind``/``bind``)."""

    __slots__ = ("_heads", "__weakref__")

    def __init__(self, heads: list[tuple]):
        self._heads = [(h[0], h[1], h[2] if len(h) > 2 else 0) for h in heads]

    # -- structure -----------------------------------------------------------
    def _nodes(self) -> list[Node]:
        return topo_order(self._heads)

    @property
    def name(self) -> str | None:
        """The name of the node of a single-output symbol (None for a group)."""
        return self._heads[0][0].name if len(self._heads) == 1 else None

    def __len__(self) -> int:
        return len(self._heads)

    def __iter__(self):
        return (Symbol([h]) for h in self._heads)

    def __getitem__(self, index: int | str) -> Symbol:
        if isinstance(index, str):
            names = self.list_outputs()
            hits = [i for i, n in enumerate(names) if n == index]
            if not hits:
                raise MXAsyncError(f"Symbol: no output named {index!r}; outputs are {names}")
            if len(hits) > 1:
                raise MXAsyncError(f"Symbol: several outputs are named {index!r}")
            index = hits[0]
        if isinstance(index, slice):
            return Symbol(self._heads[index])
        if not -len(self._heads) <= index < len(self._heads):
            raise IndexError(f"Symbol: output index {index} out of range ({len(self._heads)} outputs)")
        return Symbol([self._heads[index]])

    def _mutable_vars(self, nodes: list[Node]) -> set[int]:
        out: set[int] = set()
        for n in nodes:
            for pos in n.mutable_positions():
                child = n.inputs[pos][0]
                if child.is_variable:
                    out.add(id(child))
        return out

    def list_arguments(self) -> list[str]:
        """Names of the inputs that are not auxiliary states, in graph (DFS) order."""
        nodes = self._nodes()
        aux = self._mutable_vars(nodes)
        return [n.name for n in nodes if n.is_variable and id(n) not in aux]

    def list_auxiliary_states(self) -> list[str]:
        """Names of the auxiliary states (inputs ops update themselves, such as BatchNorm's moving stats)."""
        nodes = self._nodes()
        aux = self._mutable_vars(nodes)
        return [n.name for n in nodes if n.is_variable and id(n) in aux]

    def list_inputs(self) -> list[str]:
        """Every variable: arguments and auxiliary states, in graph order."""
        return [n.name for n in self._nodes() if n.is_variable]

    def list_outputs(self) -> list[str]:
        return [node.output_name(i) for node, i, _ in self._heads]

    def get_internals(self) -> Symbol:
        """A group of every visible output of every node (``'fc1_output'``, variables too)."""
        return Symbol([(n, i, n.version if n.is_variable else 0)
                       for n in self._nodes() for i in range(n.num_visible())])

    def _gen_atomic_symbol(self) -> Symbol:
        """The head node's op with its attributes and no inputs (MXNet's atomic symbol)."""
        node = self._heads[0][0]
        if node.is_variable:
            raise MXAsyncError(f"_gen_atomic_symbol: {node.name!r} is a variable, not an operator")
        atom = Node(node.op, node.name, node.attrs)
        return Symbol([(atom, i, 0) for i in range(atom.num_visible())])

    def eval(self, ctx=None, **kwargs) -> list:
        """Bind the arrays given by name (no gradients) and run forward once: the outputs (MXNet's
        ``Symbol.eval``; arrays the symbol does not take are ignored, as in MXNet)."""
        from ..runtime.context import current_context

        names = set(self.list_arguments())
        exe = self.bind(ctx or current_context(), {k: v for k, v in kwargs.items() if k in names}, grad_req="null")
        return exe.forward()

    def as_np_ndarray(self):
        """This symbol with NumPy's semantics (``mx.sym.np._Symbol``): its operators build ``_npi_*`` ops."""
        from .numpy._symbol import _Symbol

        return _Symbol(list(self._heads))

    def as_nd_ndarray(self) -> Symbol:
        return self

    def get_children(self) -> Symbol | None:
        """The inputs of this symbol's head node, as a group (None for a variable)."""
        node = self._heads[0][0]
        if node.is_variable:
            return None
        return Symbol(list(node.inputs))

    # -- attributes ----------------------------------------------------------------
    def attr(self, key: str) -> str | None:
        """Attribute ``key`` of the head node (hidden keys ``__key__`` are found as ``key`` too)."""
        if len(self._heads) != 1:
            return None
        attrs = self._heads[0][0].attrs
        if key in attrs:
            return attrs[key]
        return attrs.get(f"__{key}__")

    def list_attr(self) -> dict[str, str]:
        """The head node's attributes (hidden keys such as ``__lr_mult__`` also as ``lr_mult``, as MXNet)."""
        return shown_attrs(self._heads[0][0].attrs) if len(self._heads) == 1 else {}

    def attr_dict(self) -> dict[str, dict[str, str]]:
        """``{node_name: {key: value}}`` for every node that has attributes."""
        out: dict[str, dict[str, str]] = {}
        for n in self._nodes():
            if n.attrs:
                out[n.name] = shown_attrs(n.attrs)
        return out

    def _set_attr(self, **kwargs: Any) -> None:
        for node, _, _ in self._heads:
            for k, v in hide_keys(kwargs).items():
                if not isinstance(v, str):
                    raise MXAsyncError(f"_set_attr: the value of {k!r} must be a string")
                if node.op is not None and not is_hidden(k):
                    raise MXAsyncError(f"_set_attr: {k!r} on op {node.name!r} would change its params; "
                                       "use a hidden key such as '__{k}__'")
                node.attrs[k] = v

    def __bool__(self) -> bool:
        # a symbol has no value to test (MXNet raises the same)
        from ..base import NotImplementedForSymbol

        raise NotImplementedForSymbol(self.__bool__, "bool")

    # -- composition ------------------------------------------------------------------
    def __copy__(self) -> Symbol:
        return self._deepcopy()[0]

    def __deepcopy__(self, memo: dict) -> Symbol:
        return self.__copy__()

    def _deepcopy(self) -> tuple[Symbol, dict[int, Node]]:
        mapping: dict[int, Node] = {}
        for n in self._nodes():  # inputs come first
            c = n.copy()
            c.inputs = [(mapping[id(e[0])], e[1], e[2]) for e in n.inputs]
            mapping[id(n)] = c
        return Symbol([(mapping[id(h[0])], h[1], h[2]) for h in self._heads]), mapping

    def __call__(self, *args: Symbol, **kwargs: Any) -> Symbol:
        """A copy with variables replaced: positional ones in ``list_arguments()`` order, others by name."""
        out = self.__copy__()
        out._compose(*args, **kwargs)
        return out

    def _compose(self, *args: Symbol, name: str | None = None, **kwargs: Symbol) -> None:
        if args and kwargs:
            raise MXAsyncError("compose: give inputs either positionally or by name, not both")
        arg_names = self.list_arguments()
        if args:
            if len(args) > len(arg_names):
                raise MXAsyncError(f"compose: {len(args)} inputs for {len(arg_names)} arguments {arg_names}")
            kwargs = dict(zip(arg_names, args, strict=False))
        subst: dict[str, tuple] = {}
        for key, value in kwargs.items():
            if not isinstance(value, Symbol):
                raise MXAsyncError(f"compose: input {key!r} must be a Symbol, got {type(value).__name__}")
            if len(value._heads) != 1:
                raise MXAsyncError(f"compose: input {key!r} has {len(value._heads)} outputs; it needs exactly one")
            if key not in arg_names and key not in self.list_auxiliary_states():
                raise MXAsyncError(f"compose: keyword argument {key!r} not found; candidate arguments: {arg_names}")
            subst[key] = value._heads[0]
        nodes = self._nodes()
        for n in nodes:
            n.inputs = [subst[e[0].name] if e[0].is_variable and e[0].name in subst else e for e in n.inputs]
        self._heads = [subst[h[0].name] if h[0].is_variable and h[0].name in subst else h for h in self._heads]
        if name is not None and len(self._heads) == 1 and not self._heads[0][0].is_variable:
            self._heads[0][0].name = name

    # -- inference, serialization, binding (implemented in their own modules) ----------
    def infer_shape(self, *args: Any, **kwargs: Any):
        """``(arg_shapes, out_shapes, aux_shapes)``, or ``(None, None, None)`` while some shape is unknown."""
        from ._infer import infer_shape

        return infer_shape(self, args, kwargs, partial=False)

    def infer_shape_partial(self, *args: Any, **kwargs: Any):
        """Like :meth:`infer_shape`; unknown shapes are ``()``."""
        from ._infer import infer_shape

        return infer_shape(self, args, kwargs, partial=True)

    def infer_type(self, *args: Any, **kwargs: Any):
        """``(arg_types, out_types, aux_types)`` as numpy types, or ``(None, None, None)`` if incomplete."""
        from ._infer import infer_type

        return infer_type(self, args, kwargs, partial=False)

    def infer_type_partial(self, *args: Any, **kwargs: Any):
        from ._infer import infer_type

        return infer_type(self, args, kwargs, partial=True)

    def tojson(self, remove_amp_cast: bool = True) -> str:
        """The graph in MXNet 1.9.1's JSON format (byte-compatible).  ``remove_amp_cast`` (MXNet 1.9's default):
        consumers of ``amp_cast`` / ``amp_multicast`` read their inputs instead (casts that are outputs stay)."""
        from ._serialize import to_json

        return to_json(without_amp_casts(self) if remove_amp_cast else self)

    def save(self, fname: str, remove_amp_cast: bool = True) -> None:
        from ..atomic import write_file

        write_file(fname, self.tojson(remove_amp_cast))

    def debug_str(self) -> str:
        lines = ["Symbol Outputs:"] + [f"\toutput[{i}]={n}" for i, n in enumerate(self.list_outputs())]
        for n in self._nodes():
            if n.is_variable:
                lines.append(f"Variable:{n.name}")
                continue
            lines += ["--------------------", f"Op:{n.op.name}, Name={n.name}", "Inputs:"]
            lines += [f"\targ[{i}]={e[0].name}({e[1]}) version={e[2]}" for i, e in enumerate(n.inputs)]
            if n.attrs:
                lines += ["Attrs:"] + [f"\t{k}={v}" for k, v in sorted(n.attrs.items())]
        return "\n".join(lines) + "\n"

    def simple_bind(self, ctx, grad_req="write", type_dict=None, group2ctx=None, shared_arg_names=None,
                    shared_exec=None, shared_buffer=None, **kwargs):
        """Infer shapes from ``kwargs``, allocate every array and bind (see :mod:`mxasync.executor`)."""
        return _seams.executor.get().simple_bind(self, ctx, grad_req=grad_req, type_dict=type_dict, shared_exec=shared_exec,
                           group2ctx=group2ctx, **kwargs)

    _simple_bind = simple_bind

    def bind(self, ctx, args, args_grad=None, grad_req="write", aux_states=None, group2ctx=None,
             shared_exec=None):
        """Bind given arrays (lists in ``list_arguments()`` order or dicts by name)."""
        return _seams.executor.get().bind(self, ctx, args, args_grad=args_grad, grad_req=grad_req, aux_states=aux_states)

    _bind = bind

    def __repr__(self) -> str:
        if len(self._heads) == 1:
            return f"<Symbol {self.name}>"
        return f"<Symbol group [{', '.join(self.list_outputs())}]>"

    def __getstate__(self):
        return {"json": self.tojson(remove_amp_cast=False)}

    def __setstate__(self, state):
        from ._serialize import from_json

        self._heads = from_json(state["json"])._heads


def without_amp_casts(sym: Symbol) -> Symbol:
    """A copy of ``sym`` whose nodes read the inputs of the ``amp_cast`` / ``amp_multicast`` nodes they read
    (MXNet's RemoveAmpCast pass); ``sym`` itself is unchanged, and so is a graph without casts."""
    nodes = sym._nodes()
    if not any(n.op is not None and n.op.name in ("amp_cast", "amp_multicast") for n in nodes):
        return sym
    copy, _ = sym._deepcopy()
    for n in copy._nodes():  # inputs first: a cast's own inputs are rewired before its consumers
        n.inputs = [_cast_source(e) for e in n.inputs]
    return copy


def _cast_source(entry):
    node = entry[0]
    if node.op is not None and node.op.name == "amp_cast":
        return node.inputs[0]
    if node.op is not None and node.op.name == "amp_multicast":
        return node.inputs[entry[1]]
    return entry


def Variable(name: str, attr: dict | None = None, shape: tuple | None = None, lr_mult: float | None = None,
             wd_mult: float | None = None, dtype: Any = None, init: Any = None, stype: str | None = None,
             **kwargs: Any) -> Symbol:
    """A placeholder input; ``shape``/``dtype`` seed inference, ``lr_mult``/``wd_mult``/``init`` guide training.

    >>> from mxasync import symbol as sym
    >>> v = sym.Variable("x", shape=(2, 3), lr_mult=2)
    >>> v.attr("__shape__"), v.attr("lr_mult")
    ('(2, 3)', '2')
    """
    from ._naming import AttrScope

    if not isinstance(name, str):
        raise MXAsyncError(f"Variable: name must be a string, got {type(name).__name__}")
    attrs = hide_keys(AttrScope.current().get(attr))
    if shape is not None:
        if isinstance(shape, numbers.Integral):  # MXNet takes shape=5 for (5,)
            shape = (int(shape),)
        attrs["__shape__"] = str(tuple(shape))
    if lr_mult is not None:
        attrs["__lr_mult__"] = str(lr_mult)
    if wd_mult is not None:
        attrs["__wd_mult__"] = str(wd_mult)
    if dtype is not None:
        from ..ndarray._serialization import type_flag_of

        attrs["__dtype__"] = str(type_flag_of(dtype))
    if init is not None:
        attrs["__init__"] = init if isinstance(init, str) else init.dumps()
    if stype is not None:
        attrs["__storage_type__"] = {"default": "0", "row_sparse": "1", "csr": "2"}[stype]
    for k, v in hide_keys(kwargs).items():
        if not (k.startswith("__") and k.endswith("__")):
            raise MXAsyncError(f"Variable: attribute {k!r} must be hidden ('__{k}__')")
        attrs[k] = str(v)
    return Symbol([(Node(None, name, attrs), 0, 0)])


var = Variable


def Group(symbols: list[Symbol]) -> Symbol:
    """One symbol with the outputs of all ``symbols``.

    >>> from mxasync import symbol as sym
    >>> a, b = sym.Variable("a"), sym.Variable("b")
    >>> sym.Group([a, b]).list_outputs()
    ['a', 'b']
    """
    heads: list = []
    for s in symbols:
        if not isinstance(s, Symbol):
            raise MXAsyncError(f"Group: expected Symbols, got {type(s).__name__}")
        heads += s._heads
    return Symbol(heads)
