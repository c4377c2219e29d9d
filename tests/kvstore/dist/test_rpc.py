"""The dist_async request protocol: a fixed binary header, checked; only set_optimizer is pickled.

A server loop is driven here with a fake MPI world (no mpirun needed): messages a
worker would send are queued per tag, and the server's replies are recorded.
"""

from __future__ import annotations

import pickle
from types import SimpleNamespace

import numpy as np
import pytest

from mxasync.kvstore.dist import rpc, server
from mxasync.kvstore.dist.rpc import INIT, PULL, PUSH, SETOPT, STOP, TAG_DATA, TAG_META, TAG_REQ


class Aborted(Exception):
    pass


class FakeWorld:
    def __init__(self):
        self.inbox: list[tuple[int, int, bytes]] = []  # (source, tag, bytes), in send order
        self.sent: list[tuple[int, int, bytes]] = []

    def send(self, source, tag, data: bytes):
        self.inbox.append((source, tag, data))

    def Iprobe(self, source=None, tag=None, status=None):  # noqa: N802 - mpi4py's names
        for src, t, data in self.inbox:
            if t == tag:
                status.source, status.count = src, len(data)
                return True
        return False

    def Recv(self, buf, source=None, tag=None):  # noqa: N802
        for i, (src, t, data) in enumerate(self.inbox):
            if src == source and t == tag:
                del self.inbox[i]
                flat = np.asarray(buf).reshape(-1).view(np.uint8)
                flat[:len(data)] = np.frombuffer(data, np.uint8)
                return
        raise AssertionError(f"no message from {source} with tag {tag}")

    def Isend(self, buf, dest=None, tag=None):  # noqa: N802
        self.sent.append((dest, tag, np.asarray(buf).tobytes()))
        return SimpleNamespace(Test=lambda: True)


class FakeStatus:
    source = count = 0

    def Get_source(self):  # noqa: N802
        return self.source

    def Get_count(self, datatype=None):  # noqa: N802
        return self.count


def fake_comm():
    world = FakeWorld()
    aborted = []

    def abort(message, code=1):
        aborted.append(message)
        raise Aborted(message)

    mpi = SimpleNamespace(ANY_SOURCE=-1, BYTE="byte", Status=FakeStatus,
                          Request=SimpleNamespace(Waitall=lambda reqs: None))
    comm = SimpleNamespace(world=world, MPI=mpi, worker_ranks=[0, 1], server_ranks=[2], num_workers=2,
                           abort=abort, aborted=aborted)
    loop = server.ServerLoop()
    loop.start(comm)
    return comm, loop


def request(world, source, op, kid=5, part=0, payload=None, key=None, dtype="", blob=b"", tag=1001):
    meta = key.encode() if op == INIT and isinstance(key, str) else blob
    nbytes = 0 if payload is None else payload.nbytes
    world.send(source, TAG_REQ, rpc.encode_header(op, kid, part, nbytes, tag, len(meta),
                                                  key if op == INIT else None, dtype))
    if meta:
        world.send(source, TAG_META, meta)
    if payload is not None:
        world.send(source, TAG_DATA, payload.tobytes())


@pytest.fixture
def no_unpickling(monkeypatch):
    calls, real = [], pickle.loads
    monkeypatch.setattr(server.pickle, "loads", lambda data: calls.append(data) or real(data))
    return calls


def test_header_round_trip_and_size():
    raw = rpc.encode_header(PUSH, 123, 1, 4096, 1500)
    h = rpc.decode_header(raw)
    assert len(raw) == rpc.HEADER.size
    assert (h.op, h.kid, h.part, h.nbytes, h.tag, h.meta_len) == (PUSH, 123, 1, 4096, 1500, 0)


@pytest.mark.parametrize("raw, why", [
    (rpc.encode_header(42, 1, 0, 0, 1001), "unknown request op 42"),
    (rpc.encode_header(PUSH, 1, 0, -8, 1001), "negative field"),
    (rpc.encode_header(PULL, 1, 0, 8, 7), "reply tag 7"),
    (rpc.encode_header(INIT, 1, 0, 8, 1001, 0, key=1, dtype="|O8"), "not a plain numeric type"),
    (rpc.encode_header(INIT, 1, 0, 6, 1001, 0, key=1, dtype="<f4"), "not a plain numeric type of 6 bytes"),
    (rpc.encode_header(INIT, 1, 0, 8, 1001, 0, key=1, dtype="nonsense"), "bad dtype"),
    (rpc.encode_header(INIT, 1, 0, 8, 1001, 1 << 20, key="k", dtype="<f4"), "extra bytes"),
    (rpc.encode_header(PUSH, 1, 0, 8, 1001, 16), "16 extra bytes (at most 0)"),
    (b"\0" * 10, "has 52 bytes, got 10"),
])
def test_malformed_headers_are_refused(raw, why):
    with pytest.raises(rpc.ProtocolError, match=why.replace("(", r"\(").replace(")", r"\)")):
        rpc.decode_header(raw)


def test_init_push_pull_stop_unpickle_nothing(no_unpickling):
    comm, loop = fake_comm()
    world = comm.world
    request(world, 0, INIT, payload=np.arange(4, dtype=np.float32), key="weight", dtype="<f4")
    request(world, 1, PUSH, payload=np.full(4, 7, np.float32), tag=1002)
    request(world, 1, PULL, tag=1003)
    request(world, 0, STOP)
    request(world, 1, STOP)
    assert loop.poll(comm)  # every worker stopped and every reply went out
    assert loop.keys[5] == "weight" and no_unpickling == []
    statuses = [np.frombuffer(data, np.int64)[0] for dest, tag, data in world.sent if tag in (1001, 1002)]
    assert statuses == [0, 0]
    (pulled,) = [data for dest, tag, data in world.sent if tag == 1003]
    np.testing.assert_array_equal(np.frombuffer(pulled, np.float32), np.full(4, 7, np.float32))


def test_set_optimizer_is_the_one_pickled_message_and_only_from_worker0(no_unpickling):
    from mxasync import optimizer

    comm, loop = fake_comm()
    request(comm.world, 0, SETOPT, blob=pickle.dumps(optimizer.SGD(learning_rate=0.5)))
    loop.poll(comm)
    assert len(no_unpickling) == 1 and loop.updater is not None
    request(comm.world, 1, SETOPT, blob=pickle.dumps(optimizer.SGD()))
    with pytest.raises(Aborted, match="malformed request from rank 1: set_optimizer from a worker other than"):
        loop.poll(comm)
    assert len(no_unpickling) == 1


@pytest.mark.parametrize("case", ["dtype", "unknown key", "oversized push", "from a server", "header size"])
def test_a_malformed_request_ends_the_job_with_a_message(case):
    comm, loop = fake_comm()
    world = comm.world
    if case == "dtype":
        world.send(0, TAG_REQ, rpc.encode_header(INIT, 5, 0, 8, 1001, 0, key=1, dtype="|O8"))
    elif case == "unknown key":
        request(world, 0, PULL, kid=77)
    elif case == "oversized push":
        request(world, 0, INIT, payload=np.zeros(2, np.float32), key=5, dtype="<f4")
        request(world, 1, PUSH, payload=np.zeros(1 << 10, np.float32), tag=1002)
    elif case == "from a server":
        request(world, 2, STOP)
    else:
        world.send(0, TAG_REQ, b"\0" * 24)
    with pytest.raises(Aborted, match="kvstore server: malformed request from rank") as info:
        loop.poll(comm)
    assert "trusted network" in str(info.value)
