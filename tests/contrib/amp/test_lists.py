"""The op lists cover every op of the registry: MXNet 1.9.1's lists, MXNet 2.0's classification of the
NumPy-interface ops, and ``lists/equivalents.py`` for the rest."""

from __future__ import annotations

import pytest

from mxasync.contrib.amp.lists import LIKE, OpLists, listed_ops
from mxasync.operator.registry import get_op, list_ops

#: the AMP casts themselves: never cast (MXNet's bfloat16 lists leave them out too)
UNLISTED = {"amp_cast", "amp_multicast"}


@pytest.mark.parametrize("target", ["float16", "bfloat16"])
def test_every_registered_op_is_classified(target: str) -> None:
    known = listed_ops(target)
    missing = [op for op in list_ops() if op not in UNLISTED and not ({op, *(get_op(op).aliases or ())} & known)]
    assert missing == []


def test_equivalents_take_their_model_ops_place() -> None:
    lists = OpLists.make("float16")
    assert "_npx_batch_dot" in lists.widest and "batch_dot" in lists.widest
    assert "_npi_linalg_inv" in lists.fp32 and "_npi_matmul" in lists.target
    assert all(model in listed_ops("float16") for model in LIKE.values())
    # a caller's own lists are taken as given
    assert OpLists.make("float16", target_ops=["FullyConnected"]).target == {"FullyConnected"}
