"""NumPy 1's removed names on request for legacy scripts: ``mxasync run --numpy1-names`` (or
MXASYNC_NUMPY1_NAMES=1 read by the ``mxnet`` alias) gives back ``np.float``, ``np.int``, ``np.object``, binary
``np.fromstring``..., each use warning with its line; never by default, never from ``import mxasync``."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from mxasync.tools import numpy1_names

ROOT = Path(__file__).resolve().parents[1]
NUMPY2 = np.lib.NumpyVersion(np.__version__) >= "2.0.0"

SCRIPT = textwrap.dedent("""\
    import numpy as np
    import mxnet as mx
    a = np.zeros(3, dtype=np.float)
    b = np.array([1, 2], dtype=np.int)
    c = np.fromstring(np.arange(3, dtype=np.int32).tobytes(), dtype=np.int32)
    print(a.dtype, b.dtype, c.tolist(), np.object is object, mx.nd.array(a).shape)
""")


def _run(tmp_path, *args, env_extra=None):
    (tmp_path / "old.py").write_text(SCRIPT)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop(numpy1_names.ENV, None)
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "mxasync", "run", *args, "old.py"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(not NUMPY2, reason="NumPy 1 still has these names")
def test_run_numpy1_names_gives_them_back_with_a_warning_per_use(tmp_path):
    res = _run(tmp_path, "--numpy1-names")
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split("\n")[0] == "float64 int64 [0, 1, 2] True (3,)"
    for line, name in ((3, "np.float was removed"), (4, "np.int was removed"), (5, "np.fromstring's binary mode"),
                       (6, "np.object was removed")):
        assert f"old.py:{line}: NumPy1NameWarning: {name}" in res.stderr
    plain = _run(tmp_path)
    assert plain.returncode != 0 and "AttributeError" in plain.stderr and "np.float" not in plain.stderr.split(
        "Traceback")[0]


@pytest.mark.skipif(not NUMPY2, reason="NumPy 1 still has these names")
def test_never_from_import_mxasync_and_undone_by_disable():
    env = dict(os.environ, PYTHONPATH=str(ROOT), **{numpy1_names.ENV: "1"})
    code = "import mxasync, numpy as np; mxasync.nd.ones(1); print(hasattr(np, 'float'))"
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert res.stdout.strip() == "False", res.stderr[-2000:]
    numpy1_names.enable()
    try:
        with pytest.warns(numpy1_names.NumPy1NameWarning, match="np.float_ was removed"):
            assert np.float_ is np.float64
    finally:
        numpy1_names.disable()
    assert not hasattr(np, "float_") and not numpy1_names.enabled()
