"""The library changes no process-wide state: BLAS thread counts and the GIL switch interval are the user's
(only ``mxasync train``, which owns its process, sets them while it trains, and puts them back)."""

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
        return sys.getswitchinterval(), sorted(i["num_threads"] for i in threadpoolctl.threadpool_info())

    before = state()
    a = mx.nd.ones((512, 512))
    for _ in range(20):  # big enough for the worker pool, which starts here
        a = mx.nd.dot(a, a) * 1e-3
    mx.nd.waitall()
    print(before == state(), before, state())
""")


def test_engine_leaves_blas_threads_and_switch_interval_alone():
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.startswith("True"), out.stdout


def test_train_command_restores_what_it_set(tmp_path):
    import threadpoolctl

    from mxasync.train import cli as train_cli

    before = sys.getswitchinterval(), [i["num_threads"] for i in threadpoolctl.threadpool_info()]
    with train_cli._training_threads():
        inside = sys.getswitchinterval(), [i["num_threads"] for i in threadpoolctl.threadpool_info()]
    after = sys.getswitchinterval(), [i["num_threads"] for i in threadpoolctl.threadpool_info()]
    assert after == before
    assert inside[0] <= 0.0005 and all(n == 1 for n in inside[1])
