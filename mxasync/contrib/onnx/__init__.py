"""``mx.contrib.onnx``: ONNX import as MXNet 1.9.1 has it (``import_model``, ``import_to_gluon``,
``get_model_metadata``) and, as there, ``export_model`` (the same as ``mx.onnx.export_model``).
"""

from ...onnx import export_model
from ...onnx.import_model import get_model_metadata, import_model
from .gluon import import_to_gluon

__all__ = ["import_model", "import_to_gluon", "get_model_metadata", "export_model"]
