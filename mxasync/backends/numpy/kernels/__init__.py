"""The numpy backend's kernels: what makes the generic kernels fast on host memory.

The operator layer's kernels are written once against ``xp`` and run any array namespace
as they are.  What is numpy-only lives here, below the operator layer (it imports nothing
from it), and reaches the ops as the numpy backend's overrides, registered with
``register_override(..., "numpy")`` by ``mxasync/operator/numpy_overrides.py`` and found
by ``find_override`` like the CuPy backend's cuDNN kernels:

* :mod:`.runner`: :data:`~.runner.NUMPY`, the runner the generic kernels take (``run=``):
  GEMMs on the engine's own BLAS (:mod:`..blas`), kernels cut over the backend's kernel
  threads (:mod:`..parallel`), cache-sized blocks for pooling, einsum's sum of products
  for BatchNorm, scipy's erf;
* :mod:`.blocked`: optimizer updates block by block over cache-sized slices;
* :mod:`.conv`: the convolution core with its three numpy layouts (batch-inner, shifted
  views, per-sample columns kept for the backward pass).

This package re-exports nothing: import the module you need.
"""
