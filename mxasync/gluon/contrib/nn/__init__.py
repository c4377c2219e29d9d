"""``gluon.contrib.nn``: parallel containers, identity, pixel shuffles, cross-device BatchNorm."""

from .basic_layers import Concurrent, HybridConcurrent, Identity, SyncBatchNorm
from .pixel_shuffle import PixelShuffle1D, PixelShuffle2D, PixelShuffle3D
from .sparse_layers import SparseEmbedding

__all__ = ["Concurrent", "HybridConcurrent", "Identity", "SparseEmbedding", "SyncBatchNorm", "PixelShuffle1D",
           "PixelShuffle2D", "PixelShuffle3D"]
