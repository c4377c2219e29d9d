"""The library changes no process-wide state: the user's BLAS thread counts and the GIL switch interval
stay as they were (only ``mxasync train``, which owns its process, sets the switch interval while it
trains, and puts it back).  The engine's own BLAS instance is private and may do as it likes."""

from __future__ import annotations

import subprocess
import sys
import textwrap

_PROBE = textwrap.dedent("""
    import sys
    import numpy as np
    import threadpoolctl
    import mxasync as mx

    def state():
        libs = {i["filepath"]: i["num_threads"] for i in threadpoolctl.threadpool_info()}
        return sys.getswitchinterval(), libs

    before = state()
    a = mx.nd.ones((512, 512))
    for _ in range(20):  # big enough for the worker pool and the engine's BLAS, which start here
        a = mx.nd.dot(a, a) * 1e-3
    mx.nd.waitall()
    after = state()
    users = {k: v for k, v in after[1].items() if k in before[1]}
    print(before[0] == after[0] and users == before[1] and bool(before[1]), before, after)
""")


def test_engine_leaves_blas_threads_and_switch_interval_alone():
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.startswith("True"), out.stdout


def test_train_command_restores_what_it_set(tmp_path):
    import threadpoolctl

    from mxasync.backends.numpy import blas
    from mxasync.train import cli as train_cli

    def state():
        return sys.getswitchinterval(), {i["filepath"]: i["num_threads"] for i in threadpoolctl.threadpool_info()}

    blas.available()  # loads the engine's own BLAS, which is not the user's
    before = state()
    with train_cli._training_threads():
        inside = state()
    after = state()
    assert after == before
    assert inside[0] <= 0.0005
    if blas.available():  # numpy's BLAS is left alone: the engine's GEMMs run on its own
        assert inside[1] == before[1]
