"""``mx.kv``: key/value stores that sum gradients and broadcast weights (``mx.kv.create('local')``)."""

from .base import KVStoreBase, create, create_async, register
from .local import KVStoreLocal
from .teststore import TestStore

KVStore = KVStoreBase  # MXNet's name for the store class

__all__ = ["KVStore", "KVStoreBase", "KVStoreLocal", "TestStore", "create", "create_async", "register"]
