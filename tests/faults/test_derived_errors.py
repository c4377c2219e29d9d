"""A failed op's error reaches every array computed from it, under both engine types
(docs/ndarray.md, "When an op fails"): 200 rounds of a failing op and arrays derived from it,
through NDArray ops, a hybridized block, a bound executor, a sparse op and a kvstore pull,
awaited from several tasks or waited on: every wait raises, none returns data."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

PROBE = pathlib.Path(__file__).with_name("derived_errors_probe.py")
ROOT = PROBE.parents[2]


@pytest.mark.parametrize("engine_type", ["threaded", "naive"])
def test_every_wait_on_a_derived_array_raises(engine_type):
    env = dict(os.environ, MXASYNC_ENGINE_TYPE=engine_type,
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    proc = subprocess.run([sys.executable, str(PROBE), "200"], capture_output=True, text=True, timeout=300,
                          env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["engine"] == ("NaiveEngine" if engine_type == "naive" else "ThreadedEngine")
    for family, counts in result["report"].items():
        assert counts["data"] == 0 and counts["raised"] >= 500, (family, counts)
