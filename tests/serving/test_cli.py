"""``mxasync serve`` as a process: the default model's message, NAME=PATH, SIGTERM drains the requests in flight."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from mxasync.serving import cli

from .conftest import module_predict

ROOT = Path(__file__).resolve().parents[2]


def _env():
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))


def test_no_model_says_what_to_run(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli.main([]) == 2
    assert "Run 'mxasync train' first" in capsys.readouterr().err
    assert cli.main(["m=" + str(tmp_path / "nothing"), "--port", "0"]) == 1
    assert "no model at" in capsys.readouterr().err
    (tmp_path / "mxasync-train").mkdir()
    (tmp_path / "mxasync-train" / "lenet-symbol.json").write_text("{}")
    assert cli._default_models() == [("digits", os.path.join("mxasync-train", "lenet"))]


def _request(url: str, data: bytes | None = None) -> tuple[int, bytes]:
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:  # noqa: S310 - localhost
        return r.status, r.read()


def test_serve_process_drains_on_sigterm(checkpoint, examples, tmp_path):
    pytest.importorskip("aiohttp")
    prefix, mod = checkpoint
    proc = subprocess.Popen([sys.executable, "-m", "mxasync", "serve", f"mlp={prefix}", "--port", "0",
                             "--shape", "mlp=1,8,8", "--batch-size", "64", "--max-delay-ms", "600000"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=_env())
    try:
        line = proc.stdout.readline()
        assert " on http://127.0.0.1:" in line, line + proc.stderr.read()
        url = line.split(" on ")[1].split()[0]
        with ThreadPoolExecutor(3) as pool:
            replies = [pool.submit(_request, f"{url}/predictions/mlp", json.dumps(x.tolist()).encode())
                       for x in examples[:3]]
            for _ in range(2000):  # the three wait in the queue (the batch delay is ten minutes)
                _, body = _request(f"{url}/models/mlp")
                if json.loads(body)[0]["queueDepth"] == 3:
                    break
                time.sleep(0.005)
            else:
                raise AssertionError("the requests never queued")
            proc.send_signal(signal.SIGTERM)
            got = [r.result() for r in replies]
        assert [s for s, _ in got] == [200, 200, 200]
        np.testing.assert_allclose([json.loads(b) for _, b in got], module_predict(mod, examples[:3]), rtol=1e-5,
                                   atol=1e-6)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert "shutting down" in out and "stopped" in out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
