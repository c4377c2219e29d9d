"""d2l.ai's MXNet library (the ``d2l`` package) on mxasync through the ``mxnet`` alias: compat/d2l_check.py.

Runs only where d2l 1.0.3 and what ``d2l/mxnet.py`` imports are installed (CI has none of them; see
docs/porting.md). ``fixtures_d2l/values_mx191.npz`` is MXNet 1.9.1's output of
``python compat/d2l_check.py values tests/compat/fixtures_d2l/values_mx191.npz``, run in an
environment with MXNet 1.9.1 and the same d2l wheel.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mxasync import mxnet_alias

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "compat" / "d2l_check.py"
FIXTURE = Path(__file__).parent / "fixtures_d2l" / "values_mx191.npz"
NEEDS = ("d2l", "matplotlib", "matplotlib_inline", "IPython", "pandas", "requests")


@pytest.fixture(scope="module")
def check():
    missing = [m for m in NEEDS if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"d2l's MXNet library needs {', '.join(missing)}, not installed here")
    if mxnet_alias.real_mxnet():
        pytest.skip("a real MXNet is installed here: the alias stays out of its way")

    def _run(*args, cwd=None):
        env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg")
        res = subprocess.run([sys.executable, "-m", "mxasync", "run", str(SCRIPT), *args], capture_output=True,
                             text=True, env=env, cwd=cwd, timeout=600)
        assert res.returncode == 0, res.stderr[-3000:]
        return res.stdout

    return _run


def test_d2l_blocks_give_mxnet_191s_outputs_and_gradients(check, tmp_path):
    out = check("values", str(tmp_path / "values.npz"))
    assert out == "", out  # a block that raised is reported on stdout
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        from d2l_check import compare
    finally:
        sys.path.remove(str(SCRIPT.parent))
    assert compare(str(FIXTURE), str(tmp_path / "values.npz")) == []


def test_d2l_chapters_train_on_synthetic_data(check, tmp_path):
    rows = [json.loads(line) for line in check("run", cwd=tmp_path).splitlines()]
    assert [r["piece"] for r in rows if not r.get("ok")] == [], rows
    by = {r["piece"]: r for r in rows}
    assert {"linear_regression", "softmax_regression", "mlp", "lenet", "rnn", "seq2seq", "attention"} <= set(by)
    lin = by["linear_regression"]
    assert max(lin["scratch_w_err"], lin["concise_w_err"]) < 0.5 and lin["sgd_loss"] < 1e-3
    assert min(by["softmax_regression"]["scratch_val_acc"], by["softmax_regression"]["concise_val_acc"]) > 0.8
    assert by["rnn"]["scratch_val_ppl"] < 5 and by["rnn"]["concise_val_ppl"] < 5  # 14 symbols: ppl 14 at chance
    assert by["attention"]["weights"] == [16, 10, 10]
