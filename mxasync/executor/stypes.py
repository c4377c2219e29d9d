"""Storage types in a bound graph (MXNet's InferStorageType pass).

A graph binds in sparse mode when one of its arrays is sparse or a variable declares
``stype``.  Each forward entry then gets the storage type its op's ``infer_storage_type`` gives;
sparse entries get their own arrays (they are not planned).  How an op then runs on them (its
sparse kernel, or the dense kernel on dense copies: MXNet's storage fallback) is decided by
:mod:`mxasync.operator.step` from the arrays themselves, as for imperative calls.
"""

from __future__ import annotations

from ..operator.sparse.formats import DEFAULT

__all__ = ["var_stype", "infer_stypes", "grad_stype"]

_ATTR = {"0": "default", "1": "row_sparse", "2": "csr", "default": "default", "row_sparse": "row_sparse",
         "csr": "csr"}


def var_stype(node) -> str:
    """The storage type a variable declares (``Variable(stype=...)``), 'default' when none."""
    attrs = getattr(node, "attrs", None) or {}
    return _ATTR.get(str(attrs.get("__storage_type__", "0")), DEFAULT)


def infer_stypes(g, var_stypes: dict) -> list[str]:
    """The storage type of every forward entry, variables' from ``var_stypes`` (node id -> stype)."""
    stypes = [DEFAULT] * g.num_entries
    for nid, node in enumerate(g.nodes):
        base = g.entry_ptr[nid]
        if node.is_variable:
            stypes[base] = var_stypes.get(nid, DEFAULT)
            continue
        args, _ = g.split_inputs(nid)
        _, outs, _ = node.prop.infer_storage_type([stypes[e] for e in args])
        for k in range(node.num_outputs()):
            stypes[base + k] = outs[k] if k < len(outs) else DEFAULT
    return stypes


def grad_stype(g, stypes: list[str], nid: int) -> str:
    """The storage type of variable ``nid``'s gradient: what its only consumer's sparse backward
    gives it (an ``Embedding(sparse_grad=True)`` weight: row_sparse), else 'default'."""
    eid = g.entry_ptr[nid]
    uses = [(c, k) for c in range(len(g.nodes)) if not g.nodes[c].is_variable
            for k, e in enumerate(g.split_inputs(c)[0]) if e == eid]
    if len(uses) != 1:
        return DEFAULT
    c, k = uses[0]
    prop = g.nodes[c].prop
    fn = prop.sparse_backward_infer
    if fn is None:
        return DEFAULT
    args, _ = g.split_inputs(c)
    out_st = [stypes[g.entry_ptr[c] + j] for j in range(g.nodes[c].num_outputs())]
    res = fn(prop, [stypes[e] for e in args], out_st)
    return (res[k] or DEFAULT) if res is not None else DEFAULT
