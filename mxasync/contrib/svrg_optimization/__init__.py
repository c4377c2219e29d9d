"""``mx.contrib.svrg_optimization``: stochastic variance-reduced gradient training of a Module
(Johnson & Zhang, 2013), MXNet's ``SVRGModule`` and its optimizer."""

from . import svrg_module, svrg_optimizer
from .svrg_module import SVRGModule

__all__ = ["SVRGModule", "svrg_module", "svrg_optimizer"]
