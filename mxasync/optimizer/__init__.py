"""``mx.optimizer`` (also ``mx.opt``): optimizers, their registry and the Updater."""

from . import adagrad, adam, nag, rmsprop, sgd
from .adagrad import AdaGrad
from .adam import Adam
from .nag import NAG
from .optimizer import Optimizer, Updater, create, get_updater, register
from .rmsprop import RMSProp
from .sgd import SGD

__all__ = ["Optimizer", "Updater", "create", "get_updater", "register", "SGD", "NAG", "Adam", "AdaGrad",
           "RMSProp"]
