"""The NumPy-interface ops (``_npi_*``) behind ``mx.np`` / ``mx.npx``: ops of the one registry.

One module per family, as MXNet's ``src/operator/numpy``: elementwise, reductions, shape and
layout, creation, products, linear algebra, indexing, sorting, numerics (differences, statistics,
...), random sampling, and the ops whose
result's shape depends on values (``value_shaped``).
"""

from . import (  # noqa: F401
    elemwise,
    indexing,
    init,
    linalg,
    manipulation,
    npx,
    numeric,
    products,
    random,
    reduce,
    sorting,
    value_shaped,
)
