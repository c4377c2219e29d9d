"""The distributed stores on MPI: ``dist_sync``, ``dist_device_sync``, ``dist_async``.

Importing this package registers them with ``mx.kv.create``; mpi4py is imported
only when a store is created (it is the optional ``dist`` extra).  Run scripts
with ``mxasync launch -n N script.py`` or ``mpirun -n N python script.py``.
"""

from .dist_async import KVStoreDistAsync
from .dist_sync import KVStoreDistSync
from .mpi import available

__all__ = ["KVStoreDistSync", "KVStoreDistAsync", "available"]
