"""Collecting layer statistics for calibration, and MXNet's thresholds from them.

``naive``: each layer's min and max over the calibration data.  ``entropy``: a symmetric
8001-bin histogram per layer (widened as larger values arrive, as MXNet's ``combine_histogram``)
and the threshold minimising the KL divergence (``_contrib_calibrate_entropy``); a layer whose
minimum is >= 0 quantized to uint8 / auto gets the range (0, th) and twice the bins.
"""

from __future__ import annotations

import logging

import numpy as np

from ...operator.quantization.calibrate import entropy_threshold

__all__ = ["LayerOutputMinMaxCollector", "LayerHistogramCollector", "combine_histogram", "optimal_thresholds"]


class LayerOutputMinMaxCollector:
    """MXNet's ``_LayerOutputMinMaxCollector``: ``min_max_dict[name] = (min, max)``."""

    def __init__(self, quantized_dtype="int8", include_layer=None, logger=None):
        self.min_max_dict: dict[str, tuple[float, float]] = {}
        self.quantized_dtype = quantized_dtype
        self.include_layer = include_layer
        self.logger = logger

    def collect(self, name, arr):
        if self.include_layer is not None and name not in self.include_layer:
            return
        a = arr.asnumpy() if hasattr(arr, "asnumpy") else np.asarray(arr)
        lo, hi = float(a.min()), float(a.max())
        if name in self.min_max_dict:
            old = self.min_max_dict[name]
            lo, hi = min(old[0], lo), max(old[1], hi)
        self.min_max_dict[name] = (lo, hi)
        if self.logger:
            self.logger.debug("Collecting layer %s min_range=%f, max_range=%f", name, lo, hi)


def combine_histogram(old_hist, arr, new_min, new_max, new_th):
    """Add ``arr`` to a layer's histogram, widening it (whole old bins each side) past ``old_th``."""
    hist, edges, old_min, old_max, old_th = old_hist
    if new_th <= old_th:
        more, _ = np.histogram(arr, bins=len(hist), range=(-old_th, old_th))
        return hist + more, edges, min(old_min, new_min), max(old_max, new_max), old_th
    step = 2 * old_th / len(hist)
    half = int((new_th - old_th) // step + 1)
    bins = half * 2 + len(hist)
    th = half * step + old_th
    new, new_edges = np.histogram(arr, bins=bins, range=(-th, th))
    new[half:bins - half] += hist
    return new, new_edges, min(old_min, new_min), max(old_max, new_max), th


class LayerHistogramCollector:
    """MXNet's ``_LayerHistogramCollector``: ``hist_dict[name] = (hist, edges, min, max, th)``."""

    def __init__(self, num_bins=8001, include_layer=None, logger=None):
        self.hist_dict: dict[str, tuple] = {}
        self.num_bins = num_bins
        self.include_layer = include_layer
        self.logger = logger

    def collect(self, name, arr):
        if self.include_layer is not None and name not in self.include_layer:
            return
        a = arr.asnumpy() if hasattr(arr, "asnumpy") else np.asarray(arr)
        lo, hi = np.min(a), np.max(a)
        th = max(abs(lo), abs(hi))
        if name in self.hist_dict:
            self.hist_dict[name] = combine_histogram(self.hist_dict[name], a, lo, hi, th)
        else:
            hist, edges = np.histogram(a, bins=self.num_bins, range=(-th, th))
            self.hist_dict[name] = (hist, edges, lo, hi, th)


def optimal_thresholds(hist_dict, quantized_dtype="int8", num_quantized_bins=255, logger=None):
    """MXNet's ``_get_optimal_thresholds``: {layer: (min, max)} by KL divergence."""
    th_dict = {}
    for name, (hist, edges, lo, hi, _) in hist_dict.items():
        unsigned = lo >= 0 and quantized_dtype in ("auto", "uint8")
        bins = num_quantized_bins * 2 + 1 if unsigned else num_quantized_bins
        th, divergence = entropy_threshold(np.asarray(hist, np.float32), np.asarray(edges, np.float32), bins)
        th_dict[name] = (0, float(th)) if unsigned else (-float(th), float(th))
        if logger:
            logger.debug("layer=%s, min_val=%f, max_val=%f, th=%f, divergence=%f", name, lo, hi, th, divergence)
    return th_dict


def default_logger():
    return logging.getLogger("mxasync.contrib.quantization")
