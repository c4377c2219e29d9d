"""Operators: interfaces, params, the registry, SimpleOp, and the op library.

Public face; implementation lives in the named modules.  Importing this
package registers every op of the library.  Pure numerical kernels live in
``mxasync.operator.kernels``.
"""

from . import library  # registers the ops (its modules import the ones below directly)
from .base import ADD_TO, NULL, WRITE_INPLACE, WRITE_TO, OpContext, Operator, OperatorProperty, OpReqType, assign
from .functional import defop
from .params import DType, Field, NoParam, OpParam, OptShape, Shape, parse_params
from .registry import OpDef, find_override, get_op, list_ops, register_op, register_override

__all__ = ["OpReqType", "NULL", "WRITE_TO", "WRITE_INPLACE", "ADD_TO", "OpContext", "Operator",
           "OperatorProperty", "assign", "OpParam", "NoParam", "Shape", "OptShape", "DType", "Field",
           "parse_params", "OpDef", "get_op", "list_ops", "register_op", "register_override", "find_override",
           "defop"]
