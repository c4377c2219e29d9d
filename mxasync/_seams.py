"""The seams where a lower layer calls an upper one: a slot the upper layer fills.

Dependencies point down (runtime < backends < operator < ndarray < autograd <
symbol < executor < ...; ``tests/test_layering.py`` checks every import).  Where a
lower layer must reach up (``NDArray.attach_grad`` needs autograd's tape,
``Symbol.bind`` and ``mx.nd.CachedOp`` need the executor, a Python custom op hands
its user NDArrays), it calls through a
:class:`Seam` declared here, and the upper layer installs its implementation when
it loads.  Since mxasync loads its subpackages lazily, the package root
(``mxasync/__init__.py``, the one module that knows every layer) also names, per
seam, the module whose import installs it: a seam used before that module loaded
loads it then, so what works never depends on what the program imported first.

>>> seam = Seam("example")
>>> seam.install(len)
>>> seam.get()("abc")
3
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["Seam", "recorder", "executor", "wrap_array", "subgraph", "control_flow", "numpy", "symbol_op",
           "amp_casts"]


class Seam:
    """One protocol object: installed by an upper layer, called by a lower one."""

    __slots__ = ("name", "impl", "provider")

    def __init__(self, name: str) -> None:
        self.name = name
        self.impl: Any = None
        self.provider: str | None = None  # the module whose import installs it (named by mxasync/__init__.py)

    def install(self, impl: Any) -> None:
        self.impl = impl

    def get(self) -> Any:
        """The installed object, loading its provider first when nothing is installed yet."""
        impl = self.impl
        if impl is None:
            if self.provider is not None:
                importlib.import_module(self.provider)
                impl = self.impl
            if impl is None:
                raise RuntimeError(f"mxasync: nothing installed the {self.name} seam (provider {self.provider})")
        return impl

    def __repr__(self) -> str:
        return f"<Seam {self.name}: {self.impl!r}>"


#: autograd's recorder (``mxasync.ndarray._recording.Recorder``): records op calls made while
#: recording, makes arrays variables (``attach_grad``) and runs ``backward``
recorder = Seam("recorder")
#: the executor layer (``mxasync.executor.seam``): ``bind``, ``simple_bind`` and ``CachedOp``,
#: called by ``Symbol.bind``/``simple_bind`` and ``mx.nd.CachedOp``
executor = Seam("executor")
#: the NDArray layer's ``wrap(raw, ctx) -> NDArray`` over a backend array, without a copy: Python
#: custom ops (``mxasync/operator/custom.py``) hand the user NDArrays sharing the op's buffers
wrap_array = Seam("wrap_array")
#: the symbol layer's reader of a control-flow node's subgraph (``mxasync.symbol._control_flow``):
#: ``load(json) -> subgraph`` with ``names``, ``n_out``, ``shapes(given)``, ``types(given)``
subgraph = Seam("subgraph")
#: the executor layer's operator that runs ``_foreach``/``_while_loop``/``_cond``
#: (``mxasync.executor.control_flow``): ``make(prop, ctx) -> Operator``
control_flow = Seam("control_flow")
#: the NumPy interface (``mxasync.numpy.multiarray``): an object with ``ndarray`` (the class of ``mx.np``
#: arrays, for ``NDArray.as_np_ndarray``) and the ``np`` / ``npx`` modules (``mx.nd.np``, ``mx.nd.npx``)
numpy = Seam("numpy")
#: the symbol layer's ``make(op_name, *args, **kwargs) -> Symbol`` (``mx.sym.<op_name>(...)``): MXNet's legacy
#: Python ops (``mx.operator.NumpyOp`` / ``NDArrayOp``) make their symbol through it
symbol_op = Seam("symbol_op")
#: automatic mixed precision (``mxasync.contrib.amp``): while ``amp.init()`` is in force, an object with
#: ``ndarray_inputs(opdef, inputs, params) -> (inputs, params)`` (casts before an imperative call) and
#: ``symbol_inputs(opdef, node, make_cast)`` (casts on a new graph node's inputs); None otherwise, and
#: nothing installs it on demand (AMP is off until asked for)
amp_casts = Seam("amp_casts")
