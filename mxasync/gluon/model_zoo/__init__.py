"""Predefined networks (``vision``) with MXNet 1.9.1's structure and parameter names; pretrained files are
read from ``$MXNET_HOME/models`` (default ``~/.mxnet/models``), never downloaded."""

from . import model_store, vision
from .model_store import get_model_file, purge

__all__ = ["vision", "model_store", "get_model_file", "purge"]
