"""``mx.optimizer`` (also ``mx.opt``): optimizers, their registry and the Updater."""

from . import (
    adadelta,
    adagrad,
    adam,
    adamax,
    contrib,
    dcasgd,
    ftml,
    ftrl,
    lamb,
    lars,
    lbsgd,
    legacy,
    nag,
    rmsprop,
    sgd,
    sgld,
    signum,
)
from .adadelta import AdaDelta
from .adagrad import AdaGrad
from .adam import Adam
from .adamax import Adamax, Nadam
from .dcasgd import DCASGD
from .ftml import FTML
from .ftrl import Ftrl
from .lamb import LAMB
from .lars import LARS
from .lbsgd import LBSGD
from .legacy import Test, ccSGD
from .nag import NAG
from .optimizer import NDabs, Optimizer, Updater, create, get_updater, register
from .rmsprop import RMSProp
from .sgd import SGD
from .sgld import SGLD
from .signum import Signum

__all__ = ["NDabs", "Optimizer", "Updater", "create", "get_updater", "register", "SGD", "NAG", "Adam", "AdaGrad",
           "RMSProp", "AdaDelta", "Adamax", "Nadam", "DCASGD", "FTML", "Ftrl", "LAMB", "SGLD", "Signum", "ccSGD", "LARS", "LBSGD",
           "Test"]
