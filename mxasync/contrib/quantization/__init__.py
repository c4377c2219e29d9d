"""``mx.contrib.quantization``: INT8 quantization of models (MXNet 1.9.1's CPU / MKLDNN flow).

MXNet's module has no ``__all__``, so ``from mxnet.contrib.quantization import *`` (as MXNet's
``example/quantization`` scripts do) also brings the names it imported (``cpu``, ``Context``,
``Module``, ``ndarray``, ``nd_save``, ...); they are listed here for the same effect.
"""

import logging
import os

import numpy as np

from ... import ndarray
from ...context import Context, cpu
from ...io import DataBatch, DataDesc, DataIter
from ...module import Module
from ...ndarray import NDArray
from ...ndarray import load as nd_load
from ...ndarray import save as nd_save
from ...symbol import Symbol
from ...symbol import load as sym_load
from .api import (
    calib_graph,
    quantize_graph,
    quantize_model,
    quantize_model_mkldnn,
    quantize_net,
    quantize_net_v2,
    quantize_params,
)
from .calibration import LayerHistogramCollector, LayerOutputMinMaxCollector, combine_histogram, optimal_thresholds
from .fuse import fuse_mkldnn

__all__ = ["quantize_model", "quantize_model_mkldnn", "quantize_graph", "calib_graph", "quantize_net",
           "quantize_net_v2", "quantize_params", "fuse_mkldnn", "combine_histogram", "optimal_thresholds",
           "LayerHistogramCollector", "LayerOutputMinMaxCollector",
           # what MXNet's module imported, which its star-import hands on
           "logging", "os", "np", "ndarray", "NDArray", "nd_load", "nd_save", "Symbol", "sym_load", "DataIter",
           "DataDesc", "DataBatch", "cpu", "Context", "Module"]
