"""Imports every op family so that they register (one package per family, as MXNet's source tree),
then each family's ONNX converters, which attach themselves to their ops' registry entries.

Nothing imports this module but ``registry.load_all()``: an op's family (or, for ``tensor``, its
module) loads on the op's first use (``registry.get_op``), and listing the whole registry loads
them all.  A family package may import its modules itself (most do); every module of every family
is imported here either way, so a new module needs no line in this file."""

import importlib
import pkgutil

from . import (  # noqa: F401
    contrib,
    custom,
    image,
    linalg,
    loss,
    nn,
    numpy,
    optimizer,
    quantization,
    random,
    simple_op,
    sparse,
    tensor,
)

for _family in (contrib, image, linalg, loss, nn, numpy, optimizer, quantization, random, sparse, tensor):
    for _module in pkgutil.walk_packages(_family.__path__, _family.__name__ + "."):
        importlib.import_module(_module.name)
