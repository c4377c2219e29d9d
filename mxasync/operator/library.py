"""Imports every op family so that they register (one package per family, as MXNet's source tree)."""

from . import contrib, custom, image, linalg, loss, nn, optimizer, random, simple_op, tensor  # noqa: F401
