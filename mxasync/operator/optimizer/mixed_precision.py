"""Mixed-precision forms of the SGD family: mp_sgd_update, mp_sgd_mom_update, mp_nag_mom_update.

The update runs on the float32 master weight ``weight32`` (updated in place, like the
momentum); the output is the new master weight cast to the weight's dtype (float16).
"""

from __future__ import annotations

from ..functional import defop
from .lamb import MixedPrecisionProperty
from .updates import NAGMomParam, SGDMomParam, SGDParam, _nag, _sgd, _sgd_mom

__all__: list[str] = []


def _mp(single):
    def fwd(xp, p, w, g, *rest):
        *states, w32 = rest
        single(xp, p, w32, g, *states, out=w32)  # the kernels cast the float16 gradient block by block
        return w32.astype(w.dtype)
    fwd.__name__ = f"mp_{single.__name__.strip('_')}"
    return fwd


defop("mp_sgd_update", param=SGDParam, base=MixedPrecisionProperty, arguments=("weight", "grad", "weight32"),
      mutates=(2,), fwd=_mp(_sgd), doc="sgd_update on the float32 master weight ``weight32`` (in place).")
defop("mp_sgd_mom_update", param=SGDMomParam, base=MixedPrecisionProperty,
      arguments=("weight", "grad", "mom", "weight32"), mutates=(2, 3), fwd=_mp(_sgd_mom),
      doc="sgd_mom_update on the float32 master weight ``weight32``; ``mom`` (float32) in place.")
defop("mp_nag_mom_update", param=NAGMomParam, base=MixedPrecisionProperty,
      arguments=("weight", "grad", "mom", "weight32"), mutates=(2, 3), fwd=_mp(_nag),
      doc="nag_mom_update on the float32 master weight ``weight32``; ``mom`` (float32) in place.")
