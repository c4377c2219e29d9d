"""The communication thread: the one thread of a process that ever calls MPI.

Engine ops never block on the network.  A KVStore op registers a :class:`Task`
here when it is pushed and *arms* it when the engine runs it (MXNet's AsyncFn:
``fn(run_ctx, on_complete)``); this thread then drives the MPI calls and calls
``on_complete`` when they finish, so the engine, the event loop and ``await``
never wait on MPI.

Collectives must be entered in the same order on every rank, but engine ops
become ready in whatever order their inputs finish.  So *sequenced* tasks run
strictly in registration (= program) order, one at a time; unsequenced ones
(requests to server ranks) run as soon as they are armed.
"""

from __future__ import annotations

import atexit
import os
import queue
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from ...base import MXNetError
from .liveness import Liveness
from .mpi import SERVER, WORKER, init_thread, load_mpi, timeout
from .sequencer import Sequencer

__all__ = ["Comm", "Task", "get_comm"]

_WAKE = object()
_STOP = object()
_SPIN_SECONDS = 0.002  # a running collective is polled without a pause this long
_RUNNING_POLL_SECONDS = 5e-5


class Task:
    """Work for the comm thread: ``start`` once, then ``poll`` until it returns True."""

    sequenced = False
    name = "task"
    moved = False  # a long-lived task sets it when a poll did work, so the thread polls again at once

    def __init__(self) -> None:
        self.armed = False
        self.started = False
        self.on_done: Callable[[BaseException | None], None] | None = None
        self.deadline = 0.0
        self.done_var = None  # engine var only this task's op writes (detects a skipped op)

    def arm(self, on_done: Callable[[BaseException | None], None] | None) -> None:
        """Called by the engine op: the data is ready; ``on_done(err)`` ends the op."""
        self.on_done = on_done
        self.armed = True

    def skipped(self) -> bool:
        """True when the engine finished this task's op without running it (an input failed)."""
        var = self.done_var
        return var is not None and not self.armed and var.version > 0

    def start(self, comm: Comm) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def poll(self, comm: Comm) -> bool:  # pragma: no cover - overridden
        raise NotImplementedError

    def complete(self, comm: Comm, headers: dict) -> bool:  # pragma: no cover - overridden
        """Start a sequenced task's work, once every peer's header (``{rank: header}``) arrived;
        True when it is already done, False while :meth:`advance` must be polled."""
        raise NotImplementedError

    def advance(self, comm: Comm) -> bool:  # pragma: no cover - overridden
        """Poll a started sequenced task (never blocks); True once done."""
        return True

    def stalled(self, silent: list[int]) -> str:
        """Why the job ends when peers (group ranks ``silent``) of a started sequenced task fell silent."""
        return f"{self.name}: no answer from {self.waiting_for()}"

    def waiting_for(self) -> str:
        """What a timeout message says this task was waiting for."""
        return "its peers"

    def waiting_ranks(self) -> list[int] | None:
        """World ranks this started task waits on: it fails only once one of them shows no sign of
        life for the timeout (None: it fails at its fixed deadline instead)."""
        return None

    def finish(self, error: BaseException | None) -> None:
        cb, self.on_done = self.on_done, None
        if cb is not None:
            cb(error)


class Comm:
    """Process-wide MPI state and its communication thread (see :func:`get_comm`)."""

    def __init__(self, role: int = WORKER) -> None:
        self.role = role
        self.timeout = timeout()
        self.broken: BaseException | None = None
        self._inbox: queue.SimpleQueue = queue.SimpleQueue()
        self._seq: Any = None  # the Sequencer (made on the comm thread once MPI is up)
        self._active: list[Task] = []
        self._ready = threading.Event()
        self._stopped = threading.Event()
        self._init_error: BaseException | None = None
        self._seq_lock = threading.Lock()
        self.seq_count = 0  # sequenced tasks registered so far (same on every rank)
        self.push_count = 0  # gradient collectives so far; headers carry it for error messages
        self._next_tag = 0
        self.MPI: Any = None
        self.liveness: Any = None  # heartbeats among the ranks (made on the comm thread once MPI is up)
        self._thread = threading.Thread(target=self._main, name="mxasync-comm", daemon=True)
        self._thread.start()
        if not self._ready.wait(self.timeout):
            global _startup_failed
            _startup_failed = (
                f"MPI did not start within {self.timeout:g} s (MXASYNC_KVSTORE_TIMEOUT): another rank of the "
                "job never reached kv.create (slow to start, stuck before creating its store, or dead), or "
                "the ranks cannot reach each other; this rank gives up")
            raise MXNetError(_startup_failed)
        if self._init_error is not None:
            raise MXNetError(f"MPI failed to start: {self._init_error}") from self._init_error

    # ---------------------------------------------------------------- public
    def submit(self, task: Task) -> None:
        """Hand ``task`` to the comm thread; sequenced tasks keep the order of these calls."""
        if task.sequenced:
            with self._seq_lock:
                self.seq_count += 1
                self._inbox.put(task)
        else:
            self._inbox.put(task)

    def arm(self, task: Task, on_done: Callable[[BaseException | None], None] | None) -> None:
        task.arm(on_done)
        self._inbox.put(_WAKE)

    def run(self, task: Task) -> None:
        """Submit an armed ``task`` and block until it is done (for setup and shutdown).

        No fixed deadline here: the comm thread fails the task once a peer it waits on shows no
        sign of life for the timeout, so a peer that is merely busy (rank 0 saving a checkpoint
        at exit) is waited for."""
        done = threading.Event()
        errors: list[BaseException | None] = []

        def finished(err: BaseException | None) -> None:
            errors.append(err)
            done.set()

        task.arm(finished)
        self.submit(task)
        while not done.wait(1.0):
            if not self._thread.is_alive():
                raise MXNetError(f"{task.name}: the communication thread is gone")
        if errors[0] is not None:
            raise errors[0]

    def new_tag(self) -> int:
        """A fresh MPI tag for one request's reply (tags wrap well below MPI's guaranteed 32767)."""
        with self._seq_lock:
            self._next_tag = (self._next_tag + 1) % 30000
            return 1000 + self._next_tag

    @property
    def num_workers(self) -> int:
        return len(self.worker_ranks)

    @property
    def num_servers(self) -> int:
        return len(self.server_ranks)

    # ------------------------------------------------------- the comm thread
    def _main(self) -> None:
        try:
            self._init_mpi()
        except BaseException as exc:  # noqa: BLE001 - reported to the creating thread
            self._init_error = exc
            self._ready.set()
            return
        self._ready.set()
        try:
            self._loop()
            self._seq.close(self)
            self.liveness.close()
            self.MPI.Finalize()
        finally:
            self._stopped.set()

    def _init_mpi(self) -> None:
        MPI = self.MPI = load_mpi()
        if not MPI.Is_initialized():
            # only this thread makes MPI calls, except Abort, which may come from any thread.  MPI's
            # start-up waits for every rank: it runs without the GIL, so the creating thread's timeout
            # fires and an event loop awaiting create_async runs on meanwhile
            init_thread(MPI)
        world = self.world = MPI.COMM_WORLD
        self.world_rank, self.world_size = world.Get_rank(), world.Get_size()
        roles = world.allgather(self.role)
        self.worker_ranks = [r for r, role in enumerate(roles) if role == WORKER]
        self.server_ranks = [r for r, role in enumerate(roles) if role == SERVER]
        # workers' collectives run on their own communicator, so servers never take part
        self.group = world.Split(self.role, self.world_rank)
        self.rank, self.size = self.group.Get_rank(), self.group.Get_size()
        self.group_ranks = self.worker_ranks if self.role == WORKER else self.server_ranks  # group -> world
        self.liveness = Liveness(self, time.monotonic())
        self._seq = Sequencer(self)

    def _loop(self) -> None:
        wait: float | None = None
        while True:
            try:
                item = self._inbox.get(timeout=wait) if wait != 0 else self._inbox.get_nowait()
            except queue.Empty:
                item = None
            stop = False
            while item is not None:
                if item is _STOP:
                    stop = True
                elif item is not _WAKE:
                    self._accept(item)
                try:
                    item = self._inbox.get_nowait()
                except queue.Empty:
                    item = None
            self.liveness.tick(time.monotonic())
            busy = self._progress()
            if stop and not self._seq and not self._active:
                return
            # poll fast while messages fly, back off while only waiting on engine ops.  A started
            # collective moves only while MPI is polled: spin for its first moments (most end
            # there), then poll every ~50 us, sleeping in between so compute threads get the GIL
            running = self._seq.running_for() if self._seq else None
            if busy or (running is not None and running < _SPIN_SECONDS):
                wait = 0
            elif running is not None:
                wait = _RUNNING_POLL_SECONDS
            elif self._seq or self._active:
                # a header from a peer wakes nothing here: poll the network often, the engine less
                on_network = self._seq.waiting_on_peers() or any(t.started for t in self._active)
                cap = 0.001 if on_network else 0.005
                wait = 0.0002 if wait == 0 else min((wait or 0.0002) * 2, cap)
            else:
                wait = None if not stop else 0.01
            # wake for the next heartbeat, whatever else happens (or does not)
            hint = self.liveness.wait_hint(time.monotonic())
            if wait is None or wait > hint:
                wait = hint

    def _accept(self, task: Task) -> None:
        if self.broken is not None:
            self._fail(task, self.broken)
        elif task.sequenced:
            self._seq.append(task)
        else:
            self._active.append(task)

    def _progress(self) -> bool:
        """Advance every task that can move; True when something moved."""
        now = time.monotonic()
        moved = self._seq.progress(self, now) if self._seq else False
        still = []
        for task in self._active:
            if not task.armed:
                still.append(task)
                continue
            if not task.started:
                moved = True
                if not self._start(task, now):
                    continue
            if self._poll(task, now):
                moved = True
            else:
                moved |= task.moved
                still.append(task)
        self._active = still
        return moved

    def _start(self, task: Task, now: float) -> bool:
        """Start ``task``; False when it already ended (failed)."""
        task.started = True
        task.deadline = now + self.timeout
        if self.broken is not None:
            self._fail(task, self.broken)
            return False
        try:
            task.start(self)
        except BaseException as exc:  # noqa: BLE001 - ends the task, never the thread
            self._fail(task, exc, fatal=True)
            return False
        return True

    def _poll(self, task: Task, now: float) -> bool:
        """Poll a started task; True once it ended (done or failed)."""
        try:
            if task.poll(self):
                task.finish(None)
                return True
        except BaseException as exc:  # noqa: BLE001
            self._fail(task, exc, fatal=getattr(exc, "fatal", True))
            return True
        ranks = task.waiting_ranks()
        if ranks is None:
            if now > task.deadline:
                self._timed_out(task)
                return True
        elif self.liveness.silent(ranks, now):
            self._timed_out(task)
            return True
        return False

    def _timed_out(self, task: Task) -> None:
        exc = MXNetError(
            f"{task.name}: no answer from {task.waiting_for()} for {self.timeout:g} s "
            f"and no sign of life from it (stopped, hung or dead?); a rank that is only busy is waited "
            f"for; MXASYNC_KVSTORE_TIMEOUT sets how long silence may last"
        )
        self._fail(task, exc, fatal=True)

    def _complete(self, task: Task, headers: dict) -> bool:
        """Start a sequenced task whose peers' ``headers`` all arrived; True once it ended."""
        try:
            if not task.complete(self, headers):
                return False
        except BaseException as exc:  # noqa: BLE001
            self._fail(task, exc, fatal=getattr(exc, "fatal", True))
            return True
        task.finish(None)
        return True

    def _advance(self, task: Task, now: float, silent: list[int]) -> bool:
        """Poll a started sequenced task; True once it ended.  When a peer of the collective (group
        ranks ``silent``) shows no sign of life for the timeout, the job ends: MPI cannot cancel a
        started collective, and its buffers can no longer be trusted."""
        try:
            if not task.advance(self):
                if silent:
                    self.abort(f"{task.stalled(silent)} for {self.timeout:g} s and no sign of life from it "
                               "(stopped, hung or dead?); MPI cannot abandon a started collective and its "
                               "arrays can no longer be trusted, so the job ends (MXASYNC_KVSTORE_TIMEOUT sets "
                               "how long silence may last)")
                return False
        except BaseException as exc:  # noqa: BLE001
            self._fail(task, exc, fatal=True)
            return True
        task.finish(None)
        return True

    def _fail(self, task: Task, exc: BaseException, fatal: bool = False) -> None:
        if not isinstance(exc, MXNetError):
            wrapped = MXNetError(f"{task.name}: {type(exc).__name__}: {exc}")
            wrapped.__cause__ = exc
            exc = wrapped
        if fatal and self.broken is None:
            # the ranks no longer agree on what comes next: every later op fails fast
            self.broken = MXNetError(f"the distributed KVStore stopped after an earlier error: {exc}")
        task.finish(exc)

    # --------------------------------------------------------------- shutdown
    def stop(self, wait: float = 10.0) -> None:
        """Let the thread finish its tasks, finalise MPI and exit."""
        self._inbox.put(_STOP)
        self._stopped.wait(wait)

    def abort(self, message: str, code: int = 1) -> None:
        """End the whole job: print ``message`` and ask mpirun to stop every rank."""
        print(f"mxasync: rank {self.world_rank}: {message}", file=sys.stderr, flush=True)
        try:
            self.world.Abort(code)
        finally:
            os._exit(code)


_comm: Comm | None = None
_comm_lock = threading.Lock()
_startup_failed = ""  # MPI's start-up timed out: its thread is still inside MPI_Init, so no second try
_exit_hooks: list[Callable[[Comm], None]] = []


def get_comm(role: int = WORKER) -> Comm:
    """The process's :class:`Comm`, started (MPI initialised) on first use."""
    global _comm
    with _comm_lock:
        if _startup_failed:
            raise MXNetError(f"{_startup_failed} (an earlier kv.create in this process; MPI cannot be started "
                             "twice: restart the job)")
        if _comm is None:
            _comm = Comm(role)
            atexit.register(_at_exit)
        return _comm


def on_exit(hook: Callable[[Comm], None]) -> None:
    """Run ``hook(comm)`` at interpreter exit, before MPI is finalised (worker shutdown handshake)."""
    _exit_hooks.append(hook)


def _at_exit() -> None:
    comm = _comm
    if comm is None:
        return
    try:
        for hook in _exit_hooks:
            hook(comm)
    except BaseException as exc:  # noqa: BLE001 - any failure here ends the job loudly
        comm.abort(str(exc))
    if comm.broken is not None:
        comm.abort(str(comm.broken))
    comm.stop()
