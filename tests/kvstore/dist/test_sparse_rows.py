"""How row_sparse values are cut and summed for the distributed stores, without MPI (kvstore/dist/sparse.py)."""

from __future__ import annotations

import numpy as np

from mxasync.kvstore.dist.rpc import PULL_RSP, PUSH_RSP, row_shards
from mxasync.kvstore.dist.sparse import RowRequest, sum_gathered
from mxasync.operator.sparse.formats import SparseStore, empty_value, rsp_value


def test_big_keys_are_cut_into_whole_rows(monkeypatch):
    monkeypatch.setenv("MXNET_KVSTORE_BIGARRAY_BOUND", "10")
    assert row_shards(7, (5, 3), 2) == [(0, 0, 6), (1, 6, 15)]  # rows 0-1 and 2-4
    assert row_shards(7, (1, 30), 2) == [(1, 0, 30)]  # fewer rows than servers: one part
    assert row_shards(8, (3,), 1) == [(0, 0, 3)]


def test_a_push_sends_each_server_the_rows_of_its_part():
    store = SparseStore(rsp_value(np, (5, 3), np.arange(9, dtype=np.float32).reshape(3, 3), [0, 3, 4]))
    req = RowRequest(PUSH_RSP, "w", [(2, 0, 6), (3, 6, 15)], store)
    req.prepare()
    assert [(s, i) for s, i, _, _ in req.parts] == [(2, 0), (3, 1)]
    assert req.row_ids[0].tolist() == [0] and req.row_ids[1].tolist() == [1, 2]  # relative to each part
    np.testing.assert_array_equal(req.parts[1][2], [[3, 4, 5], [6, 7, 8]])
    assert req.row_size == 3


def test_a_pull_asks_only_the_servers_holding_the_rows():
    store = SparseStore(empty_value(np, "row_sparse", (5, 3), np.float32))
    req = RowRequest(PULL_RSP, "w", [(2, 0, 6), (3, 6, 15)], store, np.array([4, 2, 4]))
    req.prepare()
    assert [(s, i) for s, i, _, _ in req.parts] == [(3, 1)]
    assert req.row_ids[1].tolist() == [0, 2] and req.want.tolist() == [2, 4]
    assert req.parts[0][3].shape == (2, 3)


def test_gathered_rows_are_summed_by_index():
    v = sum_gathered(np, (6, 2), np.array([5, 1, 5, 0]), np.arange(8, dtype=np.float32).reshape(4, 2))
    assert v.indices.tolist() == [0, 1, 5]
    assert v.data.tolist() == [[6, 7], [2, 3], [4, 6]]
