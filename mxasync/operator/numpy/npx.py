"""Ops behind ``mx.npx`` that the legacy library lacks: ``_npx_reshape`` (MXNet's NumPy-interface
reshape codes) and ``_npx_shape_array``.

``npx.reshape`` codes: -1 infers one axis, -2 copies the input axis, -3 drops an input axis of
size 1, -4 copies all remaining input axes, -5 merges two input axes, -6 splits one input axis
into the next two values (one may be -1); ``reverse`` matches them from the right.

>>> npx_reshape_shape((2, 3, 4), (-2, -5))
(2, 12)
>>> npx_reshape_shape((2, 12), (-2, -6, 3, -1))
(2, 3, 4)
"""

from __future__ import annotations

import numpy as np

from ...base import MXAsyncError, MXAsyncValueError
from ._npop import npop

__all__ = ["npx_reshape_shape"]


def npx_reshape_shape(src: tuple, codes: tuple, reverse: bool = False) -> tuple:
    """The output shape of ``npx.reshape(src, codes)``."""
    if reverse:  # match from the right: the codes and the shape read backwards, the result turned back
        return tuple(reversed(npx_reshape_shape(tuple(reversed(src)), tuple(reversed(codes)))))
    out: list = []
    i = 0
    j = 0
    infer = -1
    while j < len(codes):
        c = codes[j]
        if c >= 0:
            out.append(c)
            i += 1
        elif c == -1:
            infer = len(out)
            out.append(-1)
            i += 1
        elif c == -2:
            out.append(src[i])
            i += 1
        elif c == -3:
            if src[i] != 1:
                raise MXAsyncError(f"npx.reshape: -3 drops an axis of size 1, but axis {i} of {src} is {src[i]}")
            i += 1
        elif c == -4:
            out.extend(src[i:])
            i = len(src)
        elif c == -5:
            out.append(src[i] * src[i + 1])
            i += 2
        elif c == -6:
            a, b = codes[j + 1], codes[j + 2]
            d = src[i]
            if a == -1:
                a = d // b
            if b == -1:
                b = d // a
            out.extend([a, b])
            i += 1
            j += 2
        else:
            raise MXAsyncError(f"npx.reshape: unknown code {c} in {codes}")
        j += 1
    if infer >= 0:
        known = int(np.prod([d for k, d in enumerate(out) if k != infer]))
        out[infer] = int(np.prod(src)) // max(known, 1)
    if int(np.prod(out)) != int(np.prod(src)):
        raise MXAsyncError(f"npx.reshape: cannot reshape {src} into {codes} (gives {tuple(out)})")
    return tuple(out)


npop("_npx_reshape", lambda xp, p, a: a.reshape(npx_reshape_shape(a.shape, p.newshape, p.reverse)),
     params={"newshape": (tuple[int, ...], ()), "reverse": (bool, False)},
     grad=lambda xp, p, og, ins, outs: [og[0].reshape(ins[0].shape)], deps="og,in",
     doc="``npx.reshape``: MXNet's NumPy-interface reshape codes (see the module).")
npop("_npx_shape_array", lambda xp, p, a: xp.asarray(a.shape, dtype=np.int64),
     grad=lambda xp, p, og, ins, outs: [None], doc="The shape of ``a`` as an int64 array.")


def _constraint_check(xp, p, cond):
    if not bool(xp.all(cond)):
        raise MXAsyncValueError(f"npx.constraint_check: {p.msg}")
    return xp.asarray(True)


npop("_npx_constraint_check", _constraint_check, params={"msg": (str, "Constraint violated.")},
     grad=lambda xp, p, og, ins, outs: [None], shape=lambda prop, s: [()], dtype=lambda prop, t: (t, ["bool"], []),
     doc="``True`` when every element of the input is; else a ValueError with ``msg`` (at the next wait).")
