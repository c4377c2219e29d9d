"""``gluon.contrib``: MXNet 1.9's contributed Gluon layers (``nn``, ``rnn``, ``cnn``, ``data``)."""

from . import cnn, data, nn, rnn

__all__ = ["nn", "rnn", "cnn", "data"]
