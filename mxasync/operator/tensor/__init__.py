"""Tensor ops (MXNet's src/operator/tensor): elementwise, broadcast, reduce, indexing, shape/layout, init, ordering.

Importing this package registers nothing: each module registers its ops when the registry loads it
(``mx.nd.transpose`` loads ``shape.py``, not the other modules); ``registry.load_all`` imports every module of the family.
"""
