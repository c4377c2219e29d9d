"""NumPy indexing as ops: ``_npi_index`` (any key; integer index arrays are inputs) and its gradient.

A key is stored as a tuple of literals so that it survives symbol JSON: an int, ``("s",
start, stop, step)`` for a slice, ``"..."`` for Ellipsis, ``"N"`` for None (newaxis) and
``"A"`` for the next index array among the inputs. Boolean masks become integer index
arrays before they get here (their result's shape depends on their values).

>>> from mxasync.operator import get_op
>>> key = encode_key((1, slice(None, None, 2)))
>>> get_op("_npi_index").prepare(key=key, num_args=1).infer_shape([(3, 4)])[1]
[(2,)]
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ._npop import npop, unbroadcast

__all__ = ["encode_key", "decode_key"]


def encode_key(key) -> tuple:
    """A NumPy index (without arrays; they are marked "A") as a tuple of literals."""
    key = key if isinstance(key, tuple) else (key,)
    out: list[Any] = []
    for k in key:
        if k is None:
            out.append("N")
        elif k is Ellipsis:
            out.append("...")
        elif isinstance(k, slice):
            out.append(("s", _int(k.start), _int(k.stop), _int(k.step)))
        elif isinstance(k, str):
            out.append(k)
        else:
            out.append(int(k))
    return tuple(out)


def _int(v):
    return None if v is None else int(v)


def decode_key(key, arrays) -> tuple:
    arrays = iter(arrays)
    out: list[Any] = []
    for k in key:
        if k == "N":
            out.append(None)
        elif k == "...":
            out.append(Ellipsis)
        elif k == "A":
            out.append(next(arrays).astype(np.int64, copy=False))
        elif isinstance(k, tuple):
            out.append(slice(k[1], k[2], k[3]))
        else:
            out.append(k)
    return tuple(out)


def _index(xp, p, a, *idx):
    r = a[decode_key(p.key, idx)]
    return xp.array(r) if not hasattr(r, "copy") or np.ndim(r) == 0 else r.copy()


def _index_grad(xp, p, og, ins, outs):
    a, idx = ins[0], ins[1:]
    g = xp.zeros(a.shape, a.dtype)
    key = decode_key(p.key, idx)
    if idx:
        xp.add.at(g, key, og[0])
    else:
        g[key] = og[0]
    return [g] + [None] * len(idx)


npop("_npi_index", _index, params={"key": (Any, ())}, var_args=True, grad=_index_grad, deps="og,in",
     doc="NumPy indexing ``a[key]``; index arrays are the inputs after ``a``.")


def _set_index(xp, p, a, v, *idx):
    r = a.copy()
    r[decode_key(p.key, idx)] = v
    return r


def _set_index_grad(xp, p, og, ins, outs):
    v, idx = ins[1], ins[2:]
    key = decode_key(p.key, idx)
    ga = og[0].copy()
    ga[key] = 0
    gv = og[0][key]
    return [ga, unbroadcast(xp, xp.asarray(gv), v.shape).astype(v.dtype)] + [None] * len(idx)


npop("_npi_set_index", _set_index, params={"key": (Any, ())}, var_args=True, grad=_set_index_grad, deps="og,in",
     doc="A copy of ``a`` with ``a[key] = value`` (value is the second input; index arrays follow).")


def _mask_assign(xp, p, a, mask, *value):
    r = a.copy()
    m = mask.astype(bool)
    key = (slice(None),) * p.start_axis + (m,)
    if value:  # shaped as the selection (its masked axes as one), or broadcast to it
        r[key] = xp.broadcast_to(value[0], r[key].shape)
    else:
        r[key] = p.scalar
    return r


npop("_npi_boolean_mask_assign", _mask_assign, arguments=("data", "mask", "value"),
     params={"scalar": (Optional[float], None), "start_axis": (int, 0)},
     args=lambda p: ["data", "mask"] if p.scalar is not None else ["data", "mask", "value"],
     grad=lambda xp, p, og, ins, outs: [None] * len(ins), shape=lambda prop, s: [s[0]],
     dtype=lambda prop, t: (t, [t[0]], []),
     doc="A copy of ``data`` with the positions of ``mask`` (from ``start_axis``) set to ``value``.")
