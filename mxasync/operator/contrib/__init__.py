"""Contrib ops (MXNet's src/operator/contrib, ``_contrib_*``; ``mx.nd.contrib`` / ``mx.sym.contrib``)."""

from . import all_finite, krprod, multi_lars, multi_sum_sq, reset_arrays  # noqa: F401  (importing registers the ops)
