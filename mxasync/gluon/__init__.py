"""``mx.gluon``: MXNet 1.9's imperative/hybrid front end on the mxasync engine (see ``docs/gluon.md``)."""

from . import contrib, data, loss, model_zoo, nn, parameter, rnn, utils
from .block import Block, HybridBlock, SymbolBlock
from .parameter import Constant, DeferredInitializationError, Parameter, ParameterDict, tensor_types
from .trainer import Trainer

__all__ = ["Block", "HybridBlock", "SymbolBlock", "Parameter", "ParameterDict", "Constant",
           "DeferredInitializationError", "Trainer", "contrib", "data", "loss", "model_zoo", "nn", "rnn", "utils",
           "parameter", "tensor_types"]
