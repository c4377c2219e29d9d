"""Optimizer updates with row_sparse gradients (MXNet's lazy updates).

For ``sgd_update``, ``sgd_mom_update``, ``adam_update``, ``adagrad_update`` and ``ftrl_update``
(MXNet's sparse-aware updates): with ``lazy_update=True`` (MXNet's default; ``ftrl_update`` is
always lazy) and a row_sparse gradient, only the rows the gradient stores are updated, weight and states alike: the op's own
dense kernel runs on those rows, so each optimizer's arithmetic is written once and a 10^6-row
embedding costs what its touched rows cost.  With ``lazy_update=False`` the gradient is made
dense and every row is updated (weight decay and momentum reach all rows), as MXNet's standard
update does.  A row_sparse weight is updated through a dense copy.
"""

from __future__ import annotations

from . import formats as st
from .formats import DEFAULT, RSP, register_sparse
from .kernels import densify, put_rows, stype_of, take_rows

__all__: list[str] = []


def _infer(prop, in_stypes):
    w = in_stypes[0]
    if all(s == DEFAULT for s in in_stypes):
        return None
    return [w]


def _lazy(prop) -> bool:
    return bool(getattr(prop.params, "lazy_update", True))


def _update(xp, prop, op_ctx, ins, out_stypes, out=None):
    from .elemwise import dense_apply

    w, g, *states = ins
    w_sparse = stype_of(w) != DEFAULT
    wd = densify(xp, w) if w_sparse else w
    dense_states = [densify(xp, s) for s in states]
    if stype_of(g) != RSP or not _lazy(prop):
        new_w = dense_apply(prop, op_ctx, [wd, densify(xp, g), *dense_states])[0]
        return [st.cast_value(xp, new_w, out_stypes[0])]
    rows = g.indices
    target = out[0] if out is not None and out[0] is w else (wd if w_sparse else wd.copy())
    if rows.shape[0] == 0:
        return [st.cast_value(xp, target, out_stypes[0])]
    sub_states = [take_rows(xp, s, rows) for s in dense_states]
    w_rows = take_rows(xp, wd, rows)
    # a kernel that updates its weight in place does so on the row copy: no second copy of the rows
    in_place = prop.fwd_out == "inplace"
    new_rows = dense_apply(prop, op_ctx, [w_rows, g.data, *sub_states], outs=[w_rows] if in_place else None)[0]
    put_rows(xp, target, rows, new_rows)
    for s, sub in zip(dense_states, sub_states, strict=True):
        put_rows(xp, s, rows, sub)  # the kernel updated the row copies of the states in place
    return [st.cast_value(xp, target, out_stypes[0])]


_update.wants_out = True

# the updates MXNet 1.9.1 has row_sparse kernels for; the others (rmsprop, nag, signum, ...) fall back to
# a dense gradient, hence update every row, as MXNet does
for _name in ("sgd_update", "sgd_mom_update", "adam_update", "_sparse_adagrad_update", "ftrl_update"):
    from ..registry import op_names

    if _name in op_names():  # the index's names: checking one loads nothing
        register_sparse(_name, infer=_infer, forward=_update)
