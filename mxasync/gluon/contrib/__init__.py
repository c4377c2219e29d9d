"""``gluon.contrib``: MXNet 1.9's contributed Gluon layers (``nn``, ``rnn``, ``cnn``, ``data``) and the
``estimator`` training loop."""

from . import cnn, data, estimator, nn, rnn

__all__ = ["nn", "rnn", "cnn", "data", "estimator"]
