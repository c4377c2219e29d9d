"""Engine bulking: many small sync pushes of one thread become one engine op.

Inside ``with engine.bulk(n):`` the sync pushes of this thread are collected
and pushed as one op that runs them in order.  The group is flushed when it
holds ``n`` pushes, when a push names another context, at any wait, and at the
end of the block.  Within a group, order is the push order, which already
satisfies every dependency among its members.

A collected op is pushed as far as its arrays are concerned: each var of an open
segment counts it in ``VarHandle._bulked`` until the segment is flushed, so a dead
array whose block a collected op still reads or writes is not handed to a new array
before that op ran (``VarHandle.pending``).
"""

from __future__ import annotations

from ...base import MXAsyncError

__all__ = ["BulkScope", "BulkSegment"]


class BulkSegment:
    def __init__(self, engine, size: int):
        self.engine = engine
        self.size = size
        self.ctx = None
        self.fns: list = []
        self.names: list = []
        self.reads: dict = {}  # insertion-ordered sets
        self.writes: dict = {}
        self.held: dict = {}  # every var of the segment once: its ``_bulked`` count holds it pending

    def add(self, fn, ctx, const_vars, mutate_vars, name) -> None:
        if self.fns and ctx != self.ctx:
            self.flush()
        self.ctx = ctx
        self.fns.append(fn)
        self.names.append(name)
        held = self.held
        for v in const_vars:
            self.reads[v] = None
            if v not in held:
                held[v] = None
                v._bulked += 1
        for v in mutate_vars:
            self.writes[v] = None
            if v not in held:
                held[v] = None
                v._bulked += 1
        if len(self.fns) >= self.size:
            self.flush()

    def flush(self) -> None:
        if not self.fns:
            return
        fns, names, held = self.fns, self.names, self.held
        writes = list(self.writes)
        reads = [v for v in self.reads if v not in self.writes]
        ctx = self.ctx
        self.fns, self.names, self.reads, self.writes, self.held, self.ctx = [], [], {}, {}, {}, None

        def run_segment(rctx):
            for fn, name in zip(fns, names, strict=True):
                try:
                    fn(rctx)
                except Exception as exc:
                    # name the member that failed, not the segment
                    label = name or getattr(fn, "__qualname__", "op")
                    # an MXAsyncError subclass (MXAsyncValueError) keeps its class, as op_block's wrap does
                    cls = type(exc) if isinstance(exc, MXAsyncError) else MXAsyncError
                    raise cls(f"{label} (in a bulk of {len(fns)}): {type(exc).__name__}: {exc}") from exc

        label = names[0] if len(names) == 1 and names[0] else f"Bulk[{len(fns)}]"
        tls = self.engine._tls
        saved, tls.bulk = tls.bulk, None  # the segment itself is an ordinary push
        try:
            self.engine.push_sync(run_segment, ctx, reads, writes, name=label)
        finally:
            tls.bulk = saved
            for v in held:  # the engine holds them now (or the push failed)
                v._bulked -= 1


class BulkScope:
    """Context manager returned by ``engine.bulk(size)``; nests, restoring the outer scope."""

    def __init__(self, engine, size: int):
        self.engine = engine
        self.size = int(size)
        self._saved = None
        self._segment = None

    def __enter__(self):
        tls = self.engine._tls
        self._saved = tls.bulk
        if self._saved is not None:
            self._saved.flush()
        self._segment = BulkSegment(self.engine, self.size) if self.size > 1 else None
        tls.bulk = self._segment
        return self

    def __exit__(self, *exc) -> None:
        if self._segment is not None:
            self._segment.flush()
        self.engine._tls.bulk = self._saved
