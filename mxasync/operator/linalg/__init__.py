"""Linear algebra ops (MXNet's src/operator/tensor/la_op): ``_linalg_*``, batched over leading axes."""

from . import la_op, packing, syevd  # noqa: F401
