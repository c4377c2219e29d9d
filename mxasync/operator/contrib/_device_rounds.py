"""Rounds: the copies of one op on ``ndev`` devices meet, and the last to arrive finishes them all.

``_contrib_SyncBatchNorm`` with ``ndev > 1`` reduces its batch statistics over the copies of one layer
that run on ``ndev`` contexts (MXNet's SyncBatchNorm: one copy per device, the loop
``for x in xs: net(x)``). MXNet meets them with a barrier that blocks an engine thread per device
until the last copy arrives. Here each copy is a callback op of the engine (``push_async``,
MXNet's AsyncFn): its ``fn`` computes what the device contributes, hands it to :func:`arrive` and
returns at once, so no thread ever waits for another device. The copy that completes the round
combines every contribution in context order (the same bits whichever copy came last) and calls
each copy's ``finish``, which computes that copy's outputs and calls its ``on_complete``.

A round is named by the op's ``key`` and a phase (``"forward"``, ``"backward"``); its members are
told apart by their context. An arrival joins the oldest open round of its name that has no member
on its context yet, so round ``k`` holds the ``k``-th arrival of each device: repeated steps and
several layers (each its own key) never mix. A round that is not full within
``MXASYNC_SYNC_BATCH_NORM_TIMEOUT`` seconds (default 60; read when it opens) fails: every copy that
arrived gets an ``MXNetError`` naming the key, the phase, the devices that came and the ones still
missing, on its outputs (a bounded wait: the engine cannot tell a late device from one that will
never come, since the user's thread may still push it). A timer on the engine loop checks the
open rounds of a name; no thread sleeps for it.

>>> from mxasync.runtime import Context
>>> got = []
>>> arrive(("doc", "forward"), 2, Context("cpu", 0), 1.0, sum, lambda r, e: got.append(r), "doc")
>>> arrive(("doc", "forward"), 2, Context("cpu", 1), 2.0, sum, lambda r, e: got.append(r), "doc")
>>> got
[3.0, 3.0]
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Any

from ...base import MXAsyncError, env_float
from ...runtime.engine import Engine

__all__ = ["arrive", "open_rounds"]

_TIMEOUT_ENV = "MXASYNC_SYNC_BATCH_NORM_TIMEOUT"

Finish = Callable[[Any, "BaseException | None"], None]


class _Round:
    __slots__ = ("ndev", "opened", "deadline", "members", "combine", "label")

    def __init__(self, ndev: int, timeout: float, combine: Callable[[list], Any], label: str):
        self.ndev, self.combine, self.label = ndev, combine, label
        self.opened = time.monotonic()
        self.deadline = self.opened + timeout
        self.members: dict = {}  # context -> (payload, finish)


class _Name:
    __slots__ = ("rounds", "armed")

    def __init__(self):
        self.rounds: list[_Round] = []
        self.armed = False


_lock = threading.Lock()
_names: dict = {}


def _ctx_order(ctx) -> tuple:
    return (str(ctx.device_type), int(ctx.device_id))


def arrive(name: tuple, ndev: int, ctx, payload: Any, combine: Callable[[list], Any], finish: Finish,
           label: str) -> None:
    """Hand ``payload`` of the copy on ``ctx`` to its round of ``name`` (``(key, phase)``).

    When the round has ``ndev`` members, ``combine(payloads)`` (in context order) runs in this thread
    and each member's ``finish(result, None)`` is called with it; when it fails or times out, every
    member's ``finish(None, error)``. Never blocks; ``finish`` must not raise.
    """
    engine = Engine.get()
    if engine.type == "NaiveEngine":  # it runs each op at its push: copy 0 would wait there for copy 1 forever
        finish(None, MXAsyncError(f"{label}: ndev={ndev} needs the threaded engine; MXASYNC_ENGINE_TYPE=naive "
                                  "runs each op at its push, so the first device's op could never meet the others"))
        return
    timeout = env_float(60.0, _TIMEOUT_ENV)
    full = error = None
    arm = False
    with _lock:
        entry = _names.get(name)
        if entry is None:
            entry = _names[name] = _Name()
        rnd = next((r for r in entry.rounds if ctx not in r.members), None)
        if rnd is None:
            rnd = _Round(ndev, timeout, combine, label)
            entry.rounds.append(rnd)
        rnd.members[ctx] = (payload, finish)
        if rnd.ndev != ndev:
            entry.rounds.remove(rnd)
            full, error = rnd, MXAsyncError(f"{label}: its copies disagree on ndev ({rnd.ndev} and {ndev})")
        elif len(rnd.members) == ndev:
            entry.rounds.remove(rnd)
            full, error = rnd, None
        if not entry.rounds and not entry.armed:
            del _names[name]
        elif entry.rounds and not entry.armed:
            entry.armed = arm = True
    if arm:
        engine.call_later(timeout, lambda: _expire(name, entry))
    if full is not None:
        _complete(full, error)


def _complete(rnd: _Round, error: BaseException | None) -> None:
    members = sorted(rnd.members.items(), key=lambda kv: _ctx_order(kv[0]))
    rnd.members, combine = {}, rnd.combine
    rnd.combine = None  # the round may wait on in a timer's closure: keep no arrays alive
    result = None
    if error is None:
        try:
            result = combine([p for _, (p, _) in members])
        except Exception as exc:  # noqa: BLE001 - lands on every member's outputs
            error = exc
    for _, (_, finish) in members:
        finish(result, error)


def _expire(name: tuple, entry: _Name) -> None:
    """On the engine loop: fail the rounds of ``name`` past their deadline; check again at the next one."""
    now = time.monotonic()
    with _lock:
        late = [r for r in entry.rounds if r.deadline <= now]
        for r in late:
            entry.rounds.remove(r)
        entry.armed = bool(entry.rounds)
        if not entry.armed and _names.get(name) is entry:
            del _names[name]
        nxt = min((r.deadline for r in entry.rounds), default=None)
    if nxt is not None:
        Engine.get().call_later(max(nxt - now, 0.0), lambda: _expire(name, entry))
    for r in late:
        came = sorted(r.members, key=_ctx_order)
        _complete(r, MXAsyncError(
            f"{r.label}: the {name[1]} round waited "
            f"{r.deadline - r.opened:g} s ({_TIMEOUT_ENV}) for ndev={r.ndev} devices but only "
            f"{len(came)} came ({', '.join(str(c) for c in came)}): run the layer once on each of its "
            f"{r.ndev} devices per step (in training), or set num_devices to the number of devices used; "
            "a wait (asnumpy, wait_to_read) between the devices' calls holds the thread that would push "
            "the others"))


def open_rounds() -> dict:
    """``{(key, phase): [contexts of each open round]}``: what is waiting now (tests, debugging)."""
    with _lock:
        return {n: [sorted(r.members, key=_ctx_order) for r in e.rounds] for n, e in _names.items() if e.rounds}


def _forget_in_child() -> None:
    """A forked child runs none of its parent's pending ops: their rounds can never complete there."""
    global _lock
    _lock = threading.Lock()
    _names.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)
