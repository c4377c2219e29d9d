"""Imports every op family so that they register (one package per family, as MXNet's source tree),
then each family's ONNX converters, which attach themselves to their ops' registry entries.

Nothing imports this module but ``registry.load_all()``: an op's family loads on the op's first
use (``registry.get_op``), and listing the whole registry loads them all."""

from . import contrib, custom, image, linalg, loss, nn, numpy, optimizer, random, simple_op, sparse, tensor  # noqa: F401
from .contrib import onnx_export as _contrib_onnx  # noqa: F401
from .loss import onnx_export as _loss_onnx  # noqa: F401
from .nn import onnx_export as _nn_onnx  # noqa: F401
from .nn import onnx_rnn as _rnn_onnx  # noqa: F401
from .tensor import onnx_export as _tensor_onnx  # noqa: F401
