"""The op table's rows for ``Custom``: a Python operator (x * x + bias) registered for the table."""

from __future__ import annotations

from cases import Case, uniform

import mxasync as mx


class _SquarePlus(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * in_data[0] + in_data[1])

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], 2 * in_data[0] * out_grad[0])
        self.assign(in_grad[1], req[1], out_grad[0])


@mx.operator.register("table_square_plus")
class _SquarePlusProp(mx.operator.CustomOpProp):
    def list_arguments(self):
        return ["data", "bias"]

    def create_operator(self, ctx, shapes, dtypes):
        return _SquarePlus()


CASES = [
    Case("Custom", [((3, 4), (3, 4)), ((2, 3, 2), (2, 3, 2))], ref=lambda x, b, op_type: x * x + b,
         gens=[uniform(), uniform()], params=dict(op_type="table_square_plus")),
]
