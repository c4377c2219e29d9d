"""Evaluation metrics (``mx.metric``), MXNet 1.9's classes, names and running statistics.

``update(labels, preds)`` takes lists of NDArrays (or numpy arrays); a metric
keeps local sums (``reset_local`` clears them, e.g. every Speedometer report)
and global sums (``reset`` clears both); ``get()`` gives ``(name, value)`` of
the local ones, ``get_global()`` of the global ones.
"""

from . import base, classification, correlation, custom, regression
from .base import CompositeEvalMetric, EvalMetric, alias, check_label_shapes, create, register
from .classification import F1, Accuracy, CrossEntropy, NegativeLogLikelihood, Perplexity, TopKAccuracy
from .correlation import MCC, PCC, PearsonCorrelation
from .custom import CustomMetric, np
from .regression import MAE, MSE, RMSE, Loss

__all__ = ["EvalMetric", "CompositeEvalMetric", "Accuracy", "TopKAccuracy", "F1", "Perplexity", "MAE", "MSE", "RMSE",
           "CrossEntropy", "NegativeLogLikelihood", "Loss", "CustomMetric", "create", "register", "alias", "np",
           "check_label_shapes", "MCC", "PCC", "PearsonCorrelation"]
