"""NumPy-interface products: dot, matmul, tensordot, inner, outer, vdot, einsum, kron.

``dot`` of N-d arrays is a ``tensordot`` over ``a``'s last and ``b``'s second-to-last axis,
and every gradient here comes from the tensordot rule (or einsum's).

>>> from mxasync.operator import get_op
>>> get_op("_npi_dot").prepare().infer_shape([(2, 3), (3, 4)])[1]
[(2, 4)]
"""

from __future__ import annotations

import string

import numpy as np

from ._npop import npop, unbroadcast
from .elemwise import mx_promote

__all__ = ["tensordot_axes"]


def tensordot_axes(axes, nda: int, ndb: int):
    """``(a_axes, b_axes)`` lists, non-negative, from NumPy's ``axes`` argument."""
    if isinstance(axes, int):
        return list(range(nda - axes, nda)), list(range(axes))
    a_ax, b_ax = axes
    a_ax = [a_ax] if isinstance(a_ax, int) else list(a_ax)
    b_ax = [b_ax] if isinstance(b_ax, int) else list(b_ax)
    return [x % nda for x in a_ax], [x % ndb for x in b_ax]


def _td_grads(xp, a, b, g, a_ax, b_ax):
    a_free = [i for i in range(a.ndim) if i not in a_ax]
    b_free = [i for i in range(b.ndim) if i not in b_ax]
    nfa = len(a_free)
    ga = xp.tensordot(g, b, axes=(list(range(nfa, g.ndim)), b_free))
    order_a = a_free + [a_ax[b_ax.index(bx)] for bx in sorted(b_ax)]
    ga = xp.transpose(ga, np.argsort(order_a)) if ga.ndim else ga
    gb = xp.tensordot(a, g, axes=(a_free, list(range(nfa))))
    order_b = [b_ax[a_ax.index(ax)] for ax in sorted(a_ax)] + b_free
    gb = xp.transpose(gb, np.argsort(order_b)) if gb.ndim else gb
    return ga.astype(a.dtype, copy=False), gb.astype(b.dtype, copy=False)


def _out_type(a, b):
    return mx_promote(a.dtype, b.dtype)


def _tensordot(xp, p, a, b):
    a_ax, b_ax = tensordot_axes(p.axes, a.ndim, b.ndim)
    return xp.tensordot(a, b, axes=(a_ax, b_ax)).astype(_out_type(a, b), copy=False)


def _tensordot_grad(xp, p, og, ins, outs):
    a, b = ins
    a_ax, b_ax = tensordot_axes(p.axes, a.ndim, b.ndim)
    return list(_td_grads(xp, a, b, og[0], a_ax, b_ax))


npop("_npi_tensordot", _tensordot, arguments=("a", "b"), params={"axes": (int | tuple, 2)}, grad=_tensordot_grad,
     deps="og,in", doc="NumPy's ``tensordot``.")


def _dot_axes(a, b):
    if b.ndim == 1:
        return [a.ndim - 1], [0]
    return [a.ndim - 1], [b.ndim - 2]


def _dot(xp, p, a, b):
    if a.ndim == 0 or b.ndim == 0:
        return (a * b).astype(_out_type(a, b), copy=False)
    return xp.dot(a, b).astype(_out_type(a, b), copy=False)


def _dot_grad(xp, p, og, ins, outs):
    a, b = ins
    g = og[0]
    if a.ndim == 0 or b.ndim == 0:
        ga = (g * b).sum() if a.ndim == 0 else g * b
        gb = (g * a).sum() if b.ndim == 0 else g * a
        return [xp.asarray(ga).astype(a.dtype), xp.asarray(gb).astype(b.dtype)]
    return list(_td_grads(xp, a, b, g, *_dot_axes(a, b)))


npop("_npi_dot", _dot, arguments=("a", "b"), grad=_dot_grad, deps="og,in", doc="NumPy's ``dot``.")


def _inner_grad(xp, p, og, ins, outs):
    a, b = ins
    if a.ndim == 0 or b.ndim == 0:
        return _dot_grad(xp, p, og, ins, outs)
    return list(_td_grads(xp, a, b, og[0], [a.ndim - 1], [b.ndim - 1]))


npop("_npi_inner", lambda xp, p, a, b: xp.inner(a, b).astype(_out_type(a, b), copy=False), arguments=("a", "b"),
     grad=_inner_grad, deps="og,in", doc="NumPy's ``inner``.")


def _outer_grad(xp, p, og, ins, outs):
    a, b = ins
    g = og[0]
    ga = (g @ b.reshape(-1)).reshape(a.shape)
    gb = (a.reshape(-1) @ g).reshape(b.shape)
    return [ga.astype(a.dtype), gb.astype(b.dtype)]


npop("_npi_outer", lambda xp, p, a, b: xp.outer(a, b).astype(_out_type(a, b), copy=False), arguments=("a", "b"),
     grad=_outer_grad, deps="og,in", doc="NumPy's ``outer``.")
npop("_npi_vdot", lambda xp, p, a, b: xp.asarray(xp.vdot(a, b)).astype(_out_type(a, b)), arguments=("a", "b"),
     grad=lambda xp, p, og, ins, outs: [(og[0] * ins[1]).astype(ins[0].dtype), (og[0] * ins[0]).astype(ins[1].dtype)],
     deps="og,in", doc="NumPy's ``vdot``.")


def _matmul(xp, p, a, b):
    return xp.matmul(a, b).astype(_out_type(a, b), copy=False)


def _matmul_grad(xp, p, og, ins, outs):
    a, b = ins
    a2 = a.reshape(1, -1) if a.ndim == 1 else a
    b2 = b.reshape(-1, 1) if b.ndim == 1 else b
    batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    g = og[0].reshape(batch + (a2.shape[-2], b2.shape[-1]))
    ga = xp.matmul(g, xp.swapaxes(b2, -1, -2))
    gb = xp.matmul(xp.swapaxes(a2, -1, -2), g)
    ga = unbroadcast(xp, ga, a2.shape).reshape(a.shape)
    gb = unbroadcast(xp, gb, b2.shape).reshape(b.shape)
    return [ga.astype(a.dtype), gb.astype(b.dtype)]


npop("_npi_matmul", _matmul, arguments=("a", "b"), grad=_matmul_grad, deps="og,in", doc="NumPy's ``matmul``.")


def _kron_grad(xp, p, og, ins, outs):
    a, b = ins
    g = og[0]
    nd = max(a.ndim, b.ndim)
    a2 = a.reshape((1,) * (nd - a.ndim) + a.shape)
    b2 = b.reshape((1,) * (nd - b.ndim) + b.shape)
    shape = tuple(x for pair in zip(a2.shape, b2.shape, strict=True) for x in pair)
    g4 = g.reshape(shape)
    ga = (g4 * b2.reshape(tuple(x for s in b2.shape for x in (1, s)))).sum(axis=tuple(range(1, 2 * nd, 2)))
    gb = (g4 * a2.reshape(tuple(x for s in a2.shape for x in (s, 1)))).sum(axis=tuple(range(0, 2 * nd, 2)))
    return [ga.reshape(a.shape).astype(a.dtype), gb.reshape(b.shape).astype(b.dtype)]


npop("_npi_kron", lambda xp, p, a, b: xp.kron(a, b).astype(_out_type(a, b), copy=False), arguments=("a", "b"),
     grad=_kron_grad, deps="og,in", doc="NumPy's ``kron``.")


# -- einsum -----------------------------------------------------------------------------------------
def _einsum_parts(subscripts: str, shapes):
    """Each operand's subscripts and the output's, with ``...`` spelled out in unused letters (right
    aligned, as NumPy broadcasts it), and each letter's size once size-1 axes are broadcast."""
    s = subscripts.replace(" ", "")
    lhs, out = s.split("->") if "->" in s else (s, None)
    subs = lhs.split(",")
    if out is None:
        letters = lhs.replace(",", "").replace("...", "")
        out = ("..." if "..." in lhs else "") + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    free = (c for c in string.ascii_letters if c not in s)
    widths = [len(sh) - len(sb) + 3 if "..." in sb else 0 for sb, sh in zip(subs, shapes, strict=True)]
    ell = "".join(next(free) for _ in range(max(widths, default=0)))
    subs = [sb.replace("...", ell[len(ell) - w:]) for sb, w in zip(subs, widths, strict=True)]
    sizes: dict = {}
    for sb, sh in zip(subs, shapes, strict=True):
        for c, d in zip(sb, sh, strict=True):
            if sizes.get(c, 1) == 1:
                sizes[c] = d
    return subs, out.replace("...", ell), sizes


def _einsum(xp, p, *ops):
    res = xp.einsum(p.subscripts, *ops, optimize=p.optimize)
    t = ops[0].dtype
    for o in ops[1:]:
        t = mx_promote(t, o.dtype)
    return xp.asarray(res).astype(t, copy=False)


def _einsum_grad(xp, p, og, ins, outs):
    """Each operand's gradient is the einsum of the output gradient with the other operands (all
    broadcast to full size), summed back to the operand's own shape as MXNet does; an index only
    this operand has is summed in through a ones operand, a repeated one lands on its diagonal."""
    subs, out, sizes = _einsum_parts(p.subscripts, [x.shape for x in ins])
    full = [xp.broadcast_to(x, tuple(sizes[c] for c in sb)) for x, sb in zip(ins, subs, strict=True)]
    g = og[0]
    res = []
    for i, x in enumerate(ins):
        specs = [out, *(subs[j] for j in range(len(ins)) if j != i)]
        ops = [g, *(full[j] for j in range(len(ins)) if j != i)]
        uniq = "".join(dict.fromkeys(subs[i]))
        missing = "".join(c for c in uniq if c not in "".join(specs))
        if missing:
            specs.append(missing)
            ops.append(xp.ones(tuple(sizes[c] for c in missing), g.dtype))
        r = xp.asarray(xp.einsum(",".join(specs) + "->" + uniq, *ops, optimize=p.optimize))
        if uniq != subs[i]:
            diag = xp.zeros(tuple(sizes[c] for c in subs[i]), r.dtype)
            grid = np.indices(r.shape)
            diag[tuple(grid[uniq.index(c)] for c in subs[i])] = r
            r = diag
        res.append(unbroadcast(xp, r, x.shape).astype(x.dtype))
    return res


npop("_npi_einsum", _einsum, params={"subscripts": (str, ""), "optimize": (bool, False)}, var_args=True,
     grad=_einsum_grad, deps="og,in", doc="NumPy's ``einsum``.")


# -- npx.batch_dot: matmul over any leading batch axes, either side transposed ----------------------
def _swap(xp, x, flag):
    return xp.swapaxes(x, -1, -2) if flag else x


def _batch_dot(xp, p, a, b):
    return xp.matmul(_swap(xp, a, p.transpose_a), _swap(xp, b, p.transpose_b)).astype(_out_type(a, b), copy=False)


def _batch_dot_grad(xp, p, og, ins, outs):
    a, b = ins
    g = og[0]
    a2, b2 = _swap(xp, a, p.transpose_a), _swap(xp, b, p.transpose_b)
    ga2 = xp.matmul(g, xp.swapaxes(b2, -1, -2))
    gb2 = xp.matmul(xp.swapaxes(a2, -1, -2), g)
    return [_swap(xp, ga2, p.transpose_a).astype(a.dtype), _swap(xp, gb2, p.transpose_b).astype(b.dtype)]


npop("_npx_batch_dot", _batch_dot, arguments=("a", "b"), params={"transpose_a": (bool, False),
                                                                 "transpose_b": (bool, False)},
     grad=_batch_dot_grad, deps="og,in", doc="``npx.batch_dot``: a matrix product per batch (any leading axes).")
