"""``mx.test_utils``: MXNet 1.9's helpers for users' own test suites.

Comparison with dtype-aware tolerances, random shapes and arrays, and the symbolic
checks (forward, backward and finite-difference gradients) that MXNet's operator
tests are built on.
"""

# ``from mxnet.test_utils import *`` also hands out the modules and names MXNet's test_utils
# imports (it has no __all__): MXNet's test files rely on them (``mx``, ``np``, ``sys``, ...).
import bz2
import errno
import gzip
import json
import logging
import numbers
import os
import platform
import random as rnd
import struct
import sys
import time
import traceback
import zipfile
from collections import OrderedDict
from contextlib import contextmanager

import numpy as np
import numpy.testing as npt

import mxasync as mx

from ..runtime import Features
from ..runtime.context import Context, current_context
from ..util import getenv, setenv, use_np
from .arrays import (
    assert_almost_equal_with_err,
    assign_each,
    assign_each2,
    checkShapes,
    collapse_sum_like,
    create_2d_tensor,
    create_vector,
    effective_dtype,
    get_identity_mat,
    get_identity_mat_batch,
    get_tolerance,
    locationError,
    new_matrix_with_real_eigvals_2d,
    new_matrix_with_real_eigvals_nd,
    new_orthonormal_matrix_2d,
    new_sym_matrix_with_real_eigvals_2d,
    new_sym_matrix_with_real_eigvals_nd,
    rand_coord_2d,
    random_uniform_arrays,
    same_array,
    same_symbol_structure,
)
from .compare import (
    almost_equal,
    almost_equal_ignore_nan,
    assert_allclose,
    assert_almost_equal,
    assert_almost_equal_ignore_nan,
    assert_exception,
    get_atol,
    get_etol,
    get_rtol,
    get_tols,
    same,
)
from .consistency import check_consistency
from .datasets import (
    DataUnavailableError,
    DummyIter,
    get_bz2_data,
    get_cifar10,
    get_mnist,
    get_mnist_iterator,
    get_mnist_pkl,
    get_mnist_ubyte,
    get_zip_data,
)
from .env import (
    default_atols,
    default_numeric_eps,
    default_rtols,
    discard_stderr,
    download,
    environment,
    get_im2rec_path,
    has_tvm_ops,
    is_aarch64_run,
    is_cd_run,
    is_op_runnable,
    list_gpus,
    random_sample,
    retry,
)
from .hybrid import check_gluon_hybridize_consistency
from .optim import compare_ndarray_tuple, compare_optimizer
from .sampling import (
    default_context,
    default_dtype,
    np_reduce,
    rand_ndarray,
    rand_shape_2d,
    rand_shape_3d,
    rand_shape_nd,
    random_arrays,
    set_default_context,
)
from .sparse import create_sparse_array, create_sparse_array_zd, rand_sparse_ndarray, shuffle_csr_column_indices
from .stats import chi_square_check, gen_buckets_probs_with_ppf, mean_check, var_check, verify_generator
from .symbolic import (
    check_numeric_gradient,
    check_symbolic_backward,
    check_symbolic_forward,
    numeric_grad,
    simple_forward,
)

__all__ = [
    "almost_equal", "almost_equal_ignore_nan", "assert_allclose", "assert_almost_equal",
    "assert_almost_equal_ignore_nan", "assert_exception", "get_atol", "get_etol", "get_rtol", "get_tols", "same",
    "default_context", "default_dtype", "np_reduce", "rand_ndarray", "rand_shape_2d", "rand_shape_3d",
    "rand_shape_nd", "random_arrays", "set_default_context", "check_consistency", "check_numeric_gradient",
    "check_symbolic_backward",
    "check_symbolic_forward", "numeric_grad", "simple_forward",
    "assert_almost_equal_with_err", "assign_each", "assign_each2", "checkShapes", "collapse_sum_like",
    "create_2d_tensor", "create_vector", "effective_dtype", "get_identity_mat", "get_identity_mat_batch",
    "get_tolerance", "locationError", "new_matrix_with_real_eigvals_2d", "new_matrix_with_real_eigvals_nd",
    "new_orthonormal_matrix_2d", "new_sym_matrix_with_real_eigvals_2d", "new_sym_matrix_with_real_eigvals_nd",
    "rand_coord_2d", "random_uniform_arrays", "same_array", "same_symbol_structure",
    "default_atols", "default_numeric_eps", "default_rtols", "discard_stderr", "download", "environment",
    "get_im2rec_path", "has_tvm_ops", "is_aarch64_run", "is_cd_run", "is_op_runnable", "list_gpus",
    "random_sample", "retry", "compare_ndarray_tuple", "compare_optimizer",
    "get_mnist", "get_mnist_ubyte", "get_mnist_pkl", "get_mnist_iterator", "get_cifar10", "DataUnavailableError",
    "get_zip_data", "get_bz2_data", "DummyIter", "check_gluon_hybridize_consistency",
    "chi_square_check", "gen_buckets_probs_with_ppf", "mean_check", "var_check", "verify_generator", "use_np",
    "create_sparse_array", "create_sparse_array_zd", "rand_sparse_ndarray", "shuffle_csr_column_indices",
    # what MXNet's star import gives besides its own functions
    "bz2", "errno", "gzip", "json", "logging", "numbers", "os", "platform", "rnd", "struct", "sys", "time",
    "traceback", "zipfile", "OrderedDict", "contextmanager", "np", "npt", "mx", "ss", "Context",
    "current_context", "getenv", "setenv", "Symbol", "array", "np_symbol", "Features",
]


def __getattr__(name: str):
    # scipy is optional and slow to import; the NDArray layer loads after this package
    if name == "ss":  # None without scipy, as in MXNet
        try:
            import scipy.stats as ss
        except ImportError:
            return None
        return ss
    if name == "Symbol":
        from ..symbol import Symbol

        return Symbol
    if name == "array":
        from ..ndarray import array

        return array
    if name == "np_symbol":  # the NumPy-interface Symbol class
        from ..symbol.numpy import _Symbol

        return _Symbol
    if name == "_STORAGE_TYPE_STR_TO_ID":
        from ..ndarray.ndarray import _STORAGE_TYPE_STR_TO_ID

        return _STORAGE_TYPE_STR_TO_ID
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
