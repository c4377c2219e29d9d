"""``SparseEmbedding``: an Embedding whose weight gradient is row-sparse (MXNet's
``contrib.SparseEmbedding`` op). Until row_sparse storage reaches gluon parameters the
gradient is held dense; its values are the row-sparse gradient's.

>>> import mxasync as mx
>>> layer = SparseEmbedding(10, 4)
>>> layer.initialize()
>>> layer(mx.nd.array([1, 3])).shape
(2, 4)
"""

from __future__ import annotations

from ...block import HybridBlock

__all__ = ["SparseEmbedding"]


class SparseEmbedding(HybridBlock):
    """Rows ``weight[x]`` of an ``(input_dim, output_dim)`` weight, with a sparse weight gradient."""

    def __init__(self, input_dim, output_dim, dtype="float32", weight_initializer=None, **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {"input_dim": input_dim, "output_dim": output_dim, "dtype": dtype, "sparse_grad": True}
        self.weight = self.params.get("weight", shape=(input_dim, output_dim), init=weight_initializer,
                                      dtype=dtype, allow_deferred_init=True)

    def hybrid_forward(self, F, x, weight):
        return F.Embedding(x, weight, name="fwd", **self._kwargs)

    def __repr__(self) -> str:
        k = self._kwargs
        return f"{type(self).__name__}({k['input_dim']} -> {k['output_dim']}, {k['dtype']})"
