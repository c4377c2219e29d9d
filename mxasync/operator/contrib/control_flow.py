"""The control-flow ops ``_foreach``, ``_while_loop`` and ``_cond`` that ``mx.sym.contrib`` builds.

Each node holds its subgraphs as symbol JSON (``body``; ``cond``/``func``; ``pred``/
``then_graph``/``else_graph``) and, per subgraph, ``*_locs``: the node input that feeds
each subgraph input. Shapes and types are inferred through the subgraphs. Reading a
subgraph and running one need the layers above this one, reached through two seams
(``mxasync/_seams.py``): the symbol layer's reader (``mxasync/symbol/_control_flow.py``) and
the executor layer's operator that runs the loops on NDArrays (``mxasync/executor/control_flow.py``).

Where mxasync differs from MXNet: the subgraphs are node attributes of mxasync's JSON
(MXNet writes a ``subgraphs`` field), and the params are ours.
"""

from __future__ import annotations

from pydantic import Field

from ... import _seams
from ..base import Operator, OperatorProperty
from ..params import OpParam
from ..registry import register_op

__all__ = ["ForeachParam", "WhileLoopParam", "CondParam", "known"]


def known(v) -> bool:
    """A shape (or dtype) that inference has settled: not None, no 0 dimension."""
    if v is None:
        return False
    if isinstance(v, tuple):
        return len(v) > 0 and all(d > 0 for d in v)
    return True


class _ControlFlowProperty(OperatorProperty):
    """Shared: variadic inputs, ``num_outputs`` outputs, backward by re-running under autograd."""

    key_var_num_args = "num_args"

    def __init__(self, params, name=None):
        super().__init__(params, name)
        self._graphs: dict = {}

    def graph(self, field: str):
        g = self._graphs.get(field)
        if g is None:
            g = self._graphs[field] = _seams.subgraph.get()(getattr(self.params, field))
        return g

    def list_arguments(self):
        return [f"arg{i}" for i in range(self.params.num_args)]

    def list_outputs(self):
        return [f"output{i}" for i in range(self.params.num_outputs)]

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        # out_data too: backward then waits for the forward it follows (their nested loops must not interleave)
        return list(out_grad) + list(in_data) + list(out_data)

    def create_operator(self, ctx) -> Operator:
        return _seams.control_flow.get()(self, ctx)


# -- foreach ----------------------------------------------------------------------------------
class ForeachParam(OpParam):
    num_args: int = Field(ge=1, description="the number of inputs: data, states, then the other inputs")
    num_outputs: int = Field(ge=1, description="the number of outputs: stacked step outputs, then final states")
    num_out_data: int = Field(0, ge=0, description="how many outputs are stacked step outputs")
    num_data: int = Field(1, ge=1, description="how many inputs are iterated over along axis 0")
    num_states: int = Field(0, ge=0, description="how many inputs are loop states")
    body: str = Field(description="the loop body's subgraph (symbol JSON)")
    body_locs: tuple[int, ...] = Field(description="the node input feeding each input of the body")


@register_op("_foreach", param=ForeachParam)
class ForeachProperty(_ControlFlowProperty):
    """Runs ``body`` on each slice along axis 0 of the data inputs, carrying the states."""

    def infer_shape(self, in_shapes):
        p, body = self.params, self.graph("body")
        shapes = list(in_shapes)
        # the number of steps may be unknown (0) while the rest of the data shape is known
        steps = next((s[0] for s in shapes[:p.num_data] if s is not None and len(s) > 0), None)
        sub = [(tuple(shapes[loc][1:]) if shapes[loc] is not None and known(tuple(shapes[loc][1:])) else None)
               if loc < p.num_data else shapes[loc] for loc in p.body_locs]
        outs = [None] * body.n_out
        for _ in range(2):  # a state's shape may come from the body's new state
            sub, outs = body.shapes(sub)
            for k in range(p.num_states):
                new = outs[p.num_out_data + k]
                for j, loc in enumerate(p.body_locs):
                    if loc == p.num_data + k and sub[j] is None and new is not None:
                        sub[j] = new
        for j, loc in enumerate(p.body_locs):
            if not known(shapes[loc]) and sub[j] is not None:
                shapes[loc] = sub[j] if loc >= p.num_data else ((steps,) + tuple(sub[j]) if steps else None)
        out_shapes = [(steps or 0,) + tuple(o) if o is not None else None for o in outs[:p.num_out_data]]
        out_shapes += [outs[p.num_out_data + k] or shapes[p.num_data + k] for k in range(p.num_states)]
        return shapes, out_shapes, []

    def infer_type(self, in_types):
        p, body = self.params, self.graph("body")
        sub, outs = body.types([in_types[loc] for loc in p.body_locs])
        types = list(in_types)
        for j, loc in enumerate(p.body_locs):
            if types[loc] is None:
                types[loc] = sub[j]
        outs = [o if o is not None else types[0] for o in outs]
        return types, outs, []



# -- while_loop -------------------------------------------------------------------------------
class WhileLoopParam(OpParam):
    num_args: int = Field(ge=1, description="the number of inputs: loop variables, then the other inputs")
    num_outputs: int = Field(ge=1, description="the number of outputs: stacked step outputs, then final variables")
    num_out_data: int = Field(0, ge=0, description="how many outputs are stacked step outputs")
    num_vars: int = Field(ge=1, description="how many inputs are loop variables")
    max_iterations: int = Field(ge=0, description="the most steps the loop runs (the rows of the step outputs)")
    cond: str = Field(description="the condition's subgraph (symbol JSON)")
    cond_locs: tuple[int, ...] = Field(description="the node input feeding each input of the condition")
    func: str = Field(description="the loop body's subgraph (symbol JSON)")
    func_locs: tuple[int, ...] = Field(description="the node input feeding each input of the body")


@register_op("_while_loop", param=WhileLoopParam)
class WhileLoopProperty(_ControlFlowProperty):
    """Runs ``func`` while ``cond`` holds, at most ``max_iterations`` times; step outputs padded with zeros."""

    def infer_shape(self, in_shapes):
        p, func = self.params, self.graph("func")
        shapes = list(in_shapes)
        sub, outs = func.shapes([shapes[loc] for loc in p.func_locs])
        for j, loc in enumerate(p.func_locs):
            if not known(shapes[loc]) and sub[j] is not None:
                shapes[loc] = sub[j]
        csub, _ = self.graph("cond").shapes([shapes[loc] for loc in p.cond_locs])
        for j, loc in enumerate(p.cond_locs):
            if shapes[loc] is None and csub[j] is not None:
                shapes[loc] = csub[j]
        out_shapes = [(p.max_iterations,) + tuple(o) if o is not None else None for o in outs[:p.num_out_data]]
        out_shapes += [outs[p.num_out_data + k] or shapes[k] for k in range(p.num_vars)]
        return shapes, out_shapes, []

    def infer_type(self, in_types):
        p, func = self.params, self.graph("func")
        sub, outs = func.types([in_types[loc] for loc in p.func_locs])
        types = list(in_types)
        for j, loc in enumerate(p.func_locs):
            if types[loc] is None:
                types[loc] = sub[j]
        outs = [o if o is not None else types[0] for o in outs]
        return types, outs, []



# -- cond -------------------------------------------------------------------------------------
class CondParam(OpParam):
    num_args: int = Field(ge=0, description="the number of inputs the three subgraphs read")
    num_outputs: int = Field(ge=1, description="the number of outputs of each branch")
    pred: str = Field(description="the predicate's subgraph (symbol JSON, one element)")
    pred_locs: tuple[int, ...] = Field(description="the node input feeding each input of the predicate")
    then_graph: str = Field(description="the subgraph run when the predicate is true")
    then_locs: tuple[int, ...] = Field(description="the node input feeding each input of then_graph")
    else_graph: str = Field(description="the subgraph run when the predicate is false")
    else_locs: tuple[int, ...] = Field(description="the node input feeding each input of else_graph")


@register_op("_cond", param=CondParam)
class CondProperty(_ControlFlowProperty):
    """Runs ``then_graph`` if ``pred`` is true at run time, else ``else_graph``."""

    def _branches(self):
        p = self.params
        return (("then_graph", p.then_locs), ("else_graph", p.else_locs), ("pred", p.pred_locs))

    def infer_shape(self, in_shapes):
        shapes, out_shapes = list(in_shapes), [None] * self.params.num_outputs
        for field, locs in self._branches():
            sub, outs = self.graph(field).shapes([shapes[loc] for loc in locs])
            for j, loc in enumerate(locs):
                if not known(shapes[loc]) and sub[j] is not None:
                    shapes[loc] = sub[j]
            if field != "pred":
                out_shapes = [o if o is not None else n for o, n in zip(out_shapes, outs, strict=True)]
        return shapes, out_shapes, []

    def infer_type(self, in_types):
        types, out_types = list(in_types), [None] * self.params.num_outputs
        for field, locs in self._branches():
            sub, outs = self.graph(field).types([types[loc] for loc in locs])
            for j, loc in enumerate(locs):
                if types[loc] is None:
                    types[loc] = sub[j]
            if field != "pred":
                out_types = [o if o is not None else n for o, n in zip(out_types, outs, strict=True)]
        return types, out_types, []
