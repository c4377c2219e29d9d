"""``mx.kv``: key/value stores that sum gradients and broadcast weights (``mx.kv.create('local')``)."""

from .base import KVStoreBase, create, register
from .local import KVStoreLocal

KVStore = KVStoreBase  # MXNet's name for the store class

__all__ = ["KVStore", "KVStoreBase", "KVStoreLocal", "create", "register"]
