"""``mx.sym.contrib.foreach`` / ``while_loop`` / ``cond``: control flow as graph nodes.

The user's functions are traced once on placeholder variables inside
``AttrScope(__subgraph_name__=...)``; every symbol they reach that was made outside
(the block's parameters, earlier results) is cut out of the traced subgraph and
becomes an input of the ``_foreach`` / ``_while_loop`` / ``_cond`` node, which runs
its subgraphs at run time (``mxasync/executor/control_flow.py``).

>>> import mxasync as mx
>>> step = lambda x, s: (x + s[0], [s[0] * 2])
>>> outs, states = foreach(step, mx.sym.var('data'), [mx.sym.var('s')])
>>> ex = mx.sym.Group([outs] + states).bind(mx.cpu(), {'data': mx.nd.array([1, 2, 3]), 's': mx.nd.array([1])})
>>> [o.asnumpy().ravel().tolist() for o in ex.forward()]
[[2.0, 4.0, 7.0], [8.0]]
"""

from __future__ import annotations

import copy
from collections import defaultdict

from .. import _seams
from ..ndarray._control_flow import flatten_nested, regroup_nested
from ..ndarray.ndarray import NDArray
from ..operator.contrib.control_flow import known
from ._naming import AttrScope
from ._node import Node
from ._serialize import load_json
from .register import create
from .symbol import Symbol, var

__all__ = ["foreach", "while_loop", "cond"]

_SUB = "__subgraph_name__"
if not hasattr(AttrScope, "_subgraph_names"):
    AttrScope._subgraph_names = defaultdict(int)  # MXNet's counter of subgraph names (its tests read it)


def _unique_subgraph_name(name: str) -> str:
    outer = AttrScope.current()._attr.get(_SUB, "")
    if outer:
        name = f"{outer}${name}"
    AttrScope._subgraph_names[name] += 1
    return f"{name}{AttrScope._subgraph_names[name] - 1}"


def _placeholder_name(sym: Symbol) -> str:
    node, index = sym._heads[0][0], sym._heads[0][1]
    return f"{node.name}-{index}"


def _check(flat, what):
    if not all(isinstance(x, Symbol) for x in flat):
        raise AssertionError(f"{what} should be a symbol or a nested list of symbols")


class _Traced:
    """A traced subgraph cut from its surroundings: the JSON of the subgraph and, per subgraph input,
    the outer symbol that feeds it (placeholders map to themselves by name)."""

    def __init__(self, outputs: list, name: str):
        self.name = name
        heads = []
        inside = lambda node: node.attrs.get(_SUB) == name  # noqa: E731
        reused: dict = {}
        for sym in outputs:  # an output that is an input or made outside the loop goes through identity
            node = sym._heads[0][0]
            key = (id(node), sym._heads[0][1])
            if node.is_variable or not inside(node) or key in reused:
                with AttrScope(**{_SUB: name}):
                    sym = create("_copy", [sym], {})
            reused[key] = True
            heads.append(sym._heads[0])
        self._memo: dict = {}
        self._cut: dict = {}
        self.outer: dict = {}  # subgraph input name -> outer Symbol
        self._inside = inside
        self.symbol = Symbol([self._entry(h) for h in heads])
        self.input_names = self.symbol.list_inputs()
        if len(set(self.input_names)) != len(self.input_names):
            raise AssertionError(f"The inputs of the subgraph don't have unique names: {self.input_names}")
        self.json = self.symbol.tojson(remove_amp_cast=False)

    def _entry(self, entry):
        node, index, version = entry
        if self._inside(node):
            return (self._node(node), index, version)
        key = (id(node), index)
        placeholder = self._cut.get(key)
        if placeholder is None:
            vname = node.name if node.is_variable else f"{node.name}_output{index}"
            # an outer variable keeps its attributes (a parameter's partial __shape__ helps inference)
            attrs = {k: v for k, v in node.attrs.items() if k != _SUB} if node.is_variable else {}
            placeholder = self._cut[key] = Node(None, vname, attrs)
            self.outer[vname] = Symbol([(node, index, version)])
        return (placeholder, 0, 0)

    def _node(self, node):
        if node.is_variable:
            self.outer.setdefault(node.name, Symbol([(node, 0, 0)]))
            return node
        new = self._memo.get(id(node))
        if new is None:
            new = self._memo[id(node)] = Node(node.op, node.name, dict(node.attrs),
                                              [self._entry(e) for e in node.inputs])
        return new


def _union(graphs: list, first: list) -> tuple[list, list]:
    """Node inputs: the symbols in ``first`` (placeholder name -> outer symbol), then every other outer input
    of the graphs, each once; and per graph the node input feeding each of its inputs."""
    inputs, where, locs = [], {}, []
    for name, sym in first:
        where[name] = len(inputs)
        inputs.append(sym)
    for g in graphs:
        graph_locs = []
        for name in g.input_names:
            if name not in where:
                where[name] = len(inputs)
                inputs.append(g.outer[name])
            graph_locs.append(where[name])
        locs.append(tuple(graph_locs))
    return inputs, locs


def _node(op: str, inputs: list, name: str, **params):
    return create(op, inputs, dict(params, num_args=len(inputs)), name=name)


def foreach(body, data, init_states, name="foreach"):
    """``out, states = body(data_t, states)`` over axis 0 of ``data``, as one ``_foreach`` node."""
    flat_data, data_fmt = flatten_nested(data, Symbol, "foreach input")
    _check(flat_data, "data")
    flat_states, state_fmt = flatten_nested(init_states, Symbol, "foreach states")
    _check(flat_states, "init_states")
    sub = _unique_subgraph_name(name)
    with AttrScope(**{_SUB: sub}):
        data_vars = [var(_placeholder_name(s)) for s in flat_data]
        state_vars = [var(_placeholder_name(s)) for s in flat_states]
        outs, new_states = body(regroup_nested(data_vars, data_fmt)[0],
                                regroup_nested(state_vars, copy.deepcopy(state_fmt))[0])
        outs, out_fmt = flatten_nested(outs, Symbol, "foreach output")
        new_states, new_fmt = flatten_nested(new_states, Symbol, "foreach loop_vars")
        if new_fmt != state_fmt:
            raise AssertionError("The input and output loop_vars have different format")
        graph = _Traced(outs + new_states, sub)
    for v in data_vars + state_vars:
        if v.name not in graph.input_names:
            raise AssertionError("the data and state arrays have to be used in the loop body")
    first = [(v.name, s) for v, s in zip(data_vars + state_vars, flat_data + flat_states, strict=True)]
    inputs, (locs,) = _union([graph], first)
    ret = _node("_foreach", inputs, sub, num_outputs=len(outs) + len(new_states), num_out_data=len(outs),
                num_data=len(flat_data), num_states=len(flat_states), body=graph.json, body_locs=locs)
    out_syms = [ret[i] for i in range(len(outs))]
    state_syms = [ret[len(outs) + i] for i in range(len(new_states))]
    return (regroup_nested(out_syms, out_fmt)[0] if out_syms else []), regroup_nested(state_syms, state_fmt)[0]


def _python_int(x, what):
    if isinstance(x, NDArray):
        x = x.asscalar()
    try:
        return int(x)
    except (TypeError, ValueError) as e:
        raise ValueError(f"Cannot convert {what} to python int") from e


def while_loop(cond, func, loop_vars, max_iterations=None, name="while_loop"):
    """``while cond(*vars): out, vars = func(*vars)`` (at most ``max_iterations`` times) as one node; the
    step outputs are stacked on axis 0 and padded with zeros to ``max_iterations`` rows."""
    flat_vars, var_fmt = flatten_nested(loop_vars, Symbol, "while loop_vars")
    _check(flat_vars, "loop_vars")
    if not flat_vars:
        raise ValueError("loop_vars should contain at least one element")
    if max_iterations is None:
        raise ValueError("max_iterations should be specified")
    max_iterations = _python_int(max_iterations, "max_iteration")
    names = [_placeholder_name(s) for s in flat_vars]

    cond_name = _unique_subgraph_name(name + "_cond")
    with AttrScope(**{_SUB: cond_name}):
        result = cond(*[var(n) for n in names])
        if not isinstance(result, Symbol):
            raise ValueError("Return of cond must be a Symbol")
        cond_g = _Traced([result], cond_name)
    func_name = _unique_subgraph_name(name + "_func")
    with AttrScope(**{_SUB: func_name}):
        step_out, new_vars = func(*[var(n) for n in names])
        step_out = [] if step_out is None else list(step_out) if isinstance(step_out, tuple) else step_out
        new_vars = [] if new_vars is None else list(new_vars) if isinstance(new_vars, tuple) else new_vars
        step_out, out_fmt = flatten_nested(step_out, Symbol, "while output")
        new_vars, _ = flatten_nested(new_vars, Symbol, "while loop_vars")
        if len(new_vars) != len(flat_vars):
            raise ValueError("The length of loop_vars should be consistent during the loop")
        func_g = _Traced(step_out + new_vars, func_name)
    inputs, (cond_locs, func_locs) = _union([cond_g, func_g], list(zip(names, flat_vars, strict=True)))
    ret = _node("_while_loop", inputs, name, num_outputs=len(step_out) + len(new_vars),
                num_out_data=len(step_out), num_vars=len(flat_vars), max_iterations=max_iterations,
                cond=cond_g.json, cond_locs=cond_locs, func=func_g.json, func_locs=func_locs)
    outs = [ret[i] for i in range(len(step_out))]
    final = [ret[len(step_out) + i] for i in range(len(new_vars))]
    outs = regroup_nested(outs, out_fmt)[0] if outs else []
    return outs, regroup_nested(final, var_fmt)[0]


def cond(pred, then_func, else_func, name="cond"):
    """``then_func()`` if ``pred`` (a one-element symbol) is true at run time, else ``else_func()``."""
    graphs = []
    for suffix, fn in (("_pred", lambda: pred), ("_then", then_func), ("_else", else_func)):
        sub = _unique_subgraph_name(name + suffix)
        with AttrScope(**{_SUB: sub}):
            outs = fn()
            flat, fmt = flatten_nested(outs, Symbol, "cond outputs")
            graphs.append((_Traced(flat, sub), fmt, len(flat)))
    (pred_g, _, _), (then_g, then_fmt, n_then), (else_g, _, n_else) = graphs
    if n_then != n_else:
        raise ValueError(f"cond: then_func gives {n_then} outputs but else_func {n_else}")
    inputs, (pred_locs, then_locs, else_locs) = _union([pred_g, then_g, else_g], [])
    ret = _node("_cond", inputs, name, num_outputs=n_then, pred=pred_g.json, pred_locs=pred_locs,
                then_graph=then_g.json, then_locs=then_locs, else_graph=else_g.json, else_locs=else_locs)
    return regroup_nested([ret[i] for i in range(n_then)], then_fmt)[0]


class _Subgraph:
    """A control-flow node's subgraph read from its JSON: inputs, outputs, shape and type inference."""

    def __init__(self, text: str):
        self.sym = load_json(text)
        self.names = self.sym.list_inputs()
        self.n_out = len(self.sym.list_outputs())

    def _infer(self, method, given: list):
        have = {n: v for n, v in zip(self.names, given, strict=True) if known(v)}
        try:
            arg, out, aux = getattr(self.sym, method)(**have)
        except Exception:  # noqa: BLE001 - too little known yet: the outer inference passes again with more
            return list(given), [None] * self.n_out
        if arg is None:
            return list(given), [None] * self.n_out
        by_name = dict(zip(self.sym.list_arguments(), arg, strict=True))
        by_name.update(zip(self.sym.list_auxiliary_states(), aux, strict=True))
        ins = [v if known(v) else by_name.get(n) for n, v in zip(self.names, given, strict=True)]
        return [v if known(v) else None for v in ins], [v if known(v) else None for v in out]

    def shapes(self, given):
        return self._infer("infer_shape_partial", given)

    def types(self, given):
        return self._infer("infer_type_partial", given)


_seams.subgraph.install(_Subgraph)
