"""``mx.gluon``: MXNet 1.9's imperative/hybrid front end."""

from . import data

__all__ = ["data"]
