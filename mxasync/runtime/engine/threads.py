"""The threads the engine owns: a priority worker pool and the engine's event loop.

Heavy synchronous ops run on the pool (numpy releases the GIL, so two workers
use two cores); coroutine ops run as tasks on the engine loop, which lives in
a daemon thread so that sync scripts get an event loop without asking.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import os
import threading

from ...base import env_int

__all__ = ["WorkerPool", "EngineLoop", "cpu_count"]


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


class WorkerPool:
    """Daemon threads that take ready ops from one priority heap.

    Higher ``priority`` runs first; equal priorities run in submit order.
    """

    def __init__(self, run, nthreads: int, name: str = "mxasync-worker"):
        self._run = run
        self.nthreads = nthreads
        self.heap: list = []
        self._cond = threading.Condition(threading.Lock())
        self._seq = itertools.count()
        self._name = name
        self._threads: list[threading.Thread] = []
        self.idents: set[int] = set()
        for i in range(nthreads):
            t = threading.Thread(target=self._main, name=f"{name}-{i}", daemon=True)
            self._threads.append(t)
            t.start()

    def submit(self, op, priority: int) -> None:
        with self._cond:
            heapq.heappush(self.heap, (-priority, next(self._seq), op))
            self._cond.notify()

    def _main(self) -> None:
        self.idents.add(threading.get_ident())
        heap, cond, run = self.heap, self._cond, self._run
        while True:
            with cond:
                while not heap:
                    cond.wait()
                op = heapq.heappop(heap)[2]
            if op is None:
                return
            run(op)

    def try_take(self):
        """The highest-priority ready op, taken off the heap for the calling thread to run, or None.

        A thread about to block on a wait runs queued ops itself instead: waking a worker
        costs a thread hop (~90 µs here), the op costs the same wherever it runs.
        Ops pushed with ``inline=False`` (kept off their caller's thread) are left to the workers.
        """
        if not self.heap:
            return None
        with self._cond:
            if not self.heap:
                return None
            op = self.heap[0][2]
            if op is None or op.inline is False:  # a stop sentinel, or an op its pusher kept off-thread
                return None
            return heapq.heappop(self.heap)[2]

    def stop(self) -> None:
        for _ in self._threads:
            self.submit(None, -(1 << 62))


class EngineLoop:
    """The asyncio loop that runs coroutine ops, started on first use."""

    def __init__(self):
        self._lock = threading.Lock()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread: threading.Thread | None = None
        self.tasks: set = set()

    def get(self) -> asyncio.AbstractEventLoop:
        loop = self.loop
        if loop is not None:
            return loop
        with self._lock:
            if self.loop is None:
                loop = asyncio.new_event_loop()
                started = threading.Event()

                def main():
                    asyncio.set_event_loop(loop)
                    loop.call_soon(started.set)
                    loop.run_forever()

                self.thread = threading.Thread(target=main, name="mxasync-engine-loop", daemon=True)
                self.thread.start()
                started.wait()
                self.loop = loop
            return self.loop

    def in_loop_thread(self) -> bool:
        return self.thread is not None and threading.current_thread() is self.thread

    def spawn(self, coro_factory, *args) -> None:
        """Start ``coro_factory(*args)`` as a task on the engine loop, from any thread."""
        loop = self.get()
        if self.in_loop_thread():
            self._create(coro_factory, args)
        else:
            loop.call_soon_threadsafe(self._create, coro_factory, args)

    def call_later(self, delay: float, fn) -> None:
        """Call ``fn()`` on the engine loop's thread after ``delay`` seconds, from any thread."""
        loop = self.get()
        loop.call_soon_threadsafe(loop.call_later, delay, fn)

    def _create(self, coro_factory, args) -> None:
        task = self.loop.create_task(coro_factory(*args))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)


def default_worker_threads() -> int:
    return max(1, env_int(cpu_count(), "MXASYNC_CPU_WORKER_NTHREADS", "MXNET_CPU_WORKER_NTHREADS"))
