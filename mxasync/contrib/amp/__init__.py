"""``mx.contrib.amp``: MXNet's automatic mixed precision is not provided (see docs/porting.md)."""

from . import amp
from .amp import init, init_trainer, scale_loss, unscale

__all__ = ["amp", "init", "init_trainer", "scale_loss", "unscale"]
