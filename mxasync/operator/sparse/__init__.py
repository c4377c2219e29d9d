"""Sparse storage (csr, row_sparse): values, storage-type rules, kernels (see ``formats``)."""

from . import dot, elemwise, indexing, nn, optimizer, reduce  # noqa: F401  (importing registers the rules)
