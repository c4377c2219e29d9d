"""Operators: the public face of the op library (``mx.operator``).

What is public here: MXNet's Python operators (:class:`CustomOp`, :class:`CustomOpProp`,
:func:`register`, run by ``mx.nd.Custom`` / ``mx.sym.Custom``), the base classes for writing an op (:class:`OperatorProperty`
says what it is, :class:`Operator` computes it, :class:`OpParam` its parameters),
:func:`register_op`, and the registry's look-ups :func:`get_op` / :func:`list_ops`.

The library itself lives in one package per op family, as MXNet's source tree
has them: ``tensor`` (elementwise, broadcast, reduce, indexing, shape/layout,
init, ordering), ``nn``, ``random``, ``linalg``, ``optimizer`` (update ops),
``loss`` (output layers), ``contrib``; pure numerical kernels in ``kernels``.
The framework modules (``base``, ``params``, ``registry``, ``functional``,
``simple_op``) are imported by path; none of them is part of this namespace.
An op family loads on the first use of one of its ops (``get_op``; ``mx.nd.ones`` loads
the tensor family only); listing the registry (``list_ops``) loads every family.
"""

from .base import OpContext, Operator, OperatorProperty, OpReqType, assign
from .custom import CustomOp, CustomOpProp, get_all_registered_operators, register
from .overrides import override_signature
from .params import OpParam
from .python_op import NDArrayOp, NumpyOp, PythonOp
from .registry import get_op, list_ops, register_op, register_override

__all__ = ["CustomOp", "CustomOpProp", "register", "get_all_registered_operators", "Operator", "OperatorProperty",
           "OpParam", "OpContext", "OpReqType", "assign", "register_op", "get_op", "list_ops", "override_signature",
           "register_override", "PythonOp", "NumpyOp", "NDArrayOp"]


def __dir__():
    # the submodules become attributes when imported; dir() shows the public face only (PEP 562)
    return sorted(__all__)
