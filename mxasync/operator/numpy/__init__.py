"""The NumPy-interface ops (``_npi_*``) behind ``mx.np`` / ``mx.npx``: ops of the one registry.

One module per family, as MXNet's ``src/operator/numpy``: elementwise, reductions, shape and
layout, creation, products, linear algebra, indexing, random sampling, and the ops whose
result's shape depends on values (``value_shaped``).
"""

from . import elemwise, extra, indexing, init, linalg, manipulation, misc, npx, products, random, reduce, value_shaped  # noqa: F401
