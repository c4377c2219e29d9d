"""``mx.contrib.quantization``: INT8 quantization of models (MXNet 1.9.1's CPU / MKLDNN flow)."""

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
           "LayerHistogramCollector", "LayerOutputMinMaxCollector"]
