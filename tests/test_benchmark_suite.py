"""benchmarks/suite.py end to end on one workload and mxasync alone, and its peers' code free of mxasync."""

from __future__ import annotations

import ast
import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
WORKLOADS = ROOT / "benchmarks" / "suite_workloads"


def test_suite_runs_one_workload_and_writes_its_figures(tmp_path):
    out = tmp_path / "suite.json"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "suite.py"), "--only", "tiny_op", "--rounds", "1",
                    "--frameworks", "mxasync", "--json", str(out)], env=env, check=True, capture_output=True,
                   timeout=300)
    report = json.loads(out.read_text())
    tiny = report["workloads"]["tiny_op"]
    assert tiny["unit"] == "us/call" and tiny["per_step"] == 1000
    ours = tiny["frameworks"]["mxasync"]
    assert ours["cpu_ms"] > 0 and ours["wall_ms"] > 0 and len(ours["rounds"]["cpu_ms"]) == 1
    assert ours["facts"]["numpy_us_per_call"] > 0
    assert tiny["ratios"] == {}  # no peer ran
    assert report["frameworks"]["mxasync"]["engine_cpu_workers"] >= 1


def test_workload_modules_never_import_mxasync():
    # the peers' Pythons run these modules: only worker.py may import mxasync, and only for mxasync
    for path in WORKLOADS.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n.split(".")[0] == "mxasync" for n in names):
                assert path.name == "worker.py", f"{path.name} imports mxasync"
