"""A failure caught at its own wait lets go of its memory (issue 25, item 4).

A failed kernel's frames hold its inputs; a stored error used to keep them (its traceback)
until the next ``waitall``.  Now a stored error keeps its traceback as text and is dropped
once it surfaced, so a service that catches errors at ``asnumpy`` stays flat.
"""

from __future__ import annotations

import gc

import pytest

import mxasync as mx
from mxasync.runtime.storage import Storage

MIB = 1 << 20


def test_errors_caught_at_their_wait_release_the_inputs():
    ctx = mx.cpu(6)  # a pool of its own: its counters see only this test
    st = Storage.get(ctx)
    for _ in range(12):
        x = mx.nd.ones((512, 512), ctx=ctx) * -1  # 1 MiB, pooled; not positive definite
        y = mx.nd.linalg.potrf(x)  # fails in its kernel, whose frames hold x and y
        with pytest.raises(mx.MXNetError, match="positive definite"):
            y.asnumpy()
        del x, y
    gc.collect()
    mx.nd.ones((1,), ctx=ctx).wait_to_read()  # a push runs the finalizers' deferred releases
    # 12 kept failures would hold 12 x 2 MiB; a released one holds nothing
    assert st.stats()["in_use"] <= 4 * MIB, st.stats()
    mx.nd.waitall()


def test_a_stored_error_keeps_its_traceback_as_text():
    x = mx.nd.ones((4, 4)) * -1
    y = mx.nd.linalg.potrf(x)
    with pytest.raises(mx.MXNetError) as info:
        y.asnumpy()
    cause = info.value.__cause__
    assert cause is not None and cause.__traceback__ is None  # no live frames
    notes = "\n".join(getattr(cause, "__notes__", ()))
    assert "traceback, kept as text" in notes and "File " in notes
    mx.nd.waitall()
