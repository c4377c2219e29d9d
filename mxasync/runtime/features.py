"""``mx.runtime.Features``: what this installation offers, under MXNet's feature names.

MXNet reports how its library was compiled; mxasync reports what it can do here: the
CUDA family when a GPU backend is available, the distributed KVStore when mpi4py
imports, and MXNet's names for what mxasync does not have (TensorRT, TVM, MKLDNN, ...)
as disabled, so code asking ``is_enabled('X')`` gets an answer instead of an error.
"""

from __future__ import annotations

import collections
import importlib.util

__all__ = ["Feature", "Features", "feature_list"]

# MXNet 1.9's feature names, in its order.
_NAMES = ("CUDA", "CUDNN", "NCCL", "CUDA_RTC", "TENSORRT", "CPU_SSE", "CPU_SSE2", "CPU_SSE3", "CPU_SSE4_1",
          "CPU_SSE4_2", "CPU_SSE4A", "CPU_AVX", "CPU_AVX2", "OPENMP", "SSE", "F16C", "JEMALLOC", "BLAS_OPEN",
          "BLAS_ATLAS", "BLAS_MKL", "BLAS_APPLE", "LAPACK", "MKLDNN", "OPENCV", "CAFFE", "PROFILER",
          "DIST_KVSTORE", "CXX14", "INT64_TENSOR_SIZE", "SIGNAL_HANDLER", "DEBUG", "TVM_OP")


class Feature(collections.namedtuple("Feature", ["name", "enabled"])):
    """One feature and whether it is available."""

    def __repr__(self) -> str:
        return f"{'✔' if self.enabled else '✖'} {self.name}"


def _has(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _enabled(name: str) -> bool:
    if name in ("CUDA", "CUDA_RTC"):
        from .context import num_gpus

        return num_gpus() > 0
    if name == "DIST_KVSTORE":
        return _has("mpi4py")
    if name == "OPENCV":
        return _has("cv2")
    if name in ("PROFILER", "LAPACK", "CXX14"):
        return True
    # INT64_TENSOR_SIZE: index outputs (topk, argmax, ...) keep MXNet's default float32/int32 types
    return False


def feature_list() -> list[Feature]:
    """Every feature with whether it is enabled here.

    >>> [f.name for f in feature_list()][:2]
    ['CUDA', 'CUDNN']
    """
    return [Feature(name, _enabled(name)) for name in _NAMES]


class Features(collections.OrderedDict):
    """Name -> :class:`Feature`, one instance per process (as MXNet's).

    >>> Features().is_enabled("cpu_sse4a") in (True, False)
    True
    """

    instance = None

    def __new__(cls):
        if cls.instance is None:
            cls.instance = super().__new__(cls)
            super(Features, cls.instance).__init__((f.name, f) for f in feature_list())
        return cls.instance

    def __init__(self) -> None:  # filled once in __new__
        pass

    def __repr__(self) -> str:
        return str(list(self.values()))

    def is_enabled(self, feature_name: str) -> bool:
        """Whether ``feature_name`` (any case) is enabled; RuntimeError for an unknown name."""
        name = feature_name.upper()
        if name not in self:
            raise RuntimeError(f"Feature '{name}' is unknown, known features are: {list(self.keys())}")
        return self[name].enabled
