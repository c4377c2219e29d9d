"""``mx.onnx``: export models to ONNX (MXNet 1.9.1's ``mxnet.onnx``); import is ``mx.contrib.onnx``.

Needs the ``onnx`` package (``pip install 'mxasync[onnx]'``); importing this module does not.
"""

from .export import export_model, get_operator_support

__all__ = ["export_model", "get_operator_support"]
