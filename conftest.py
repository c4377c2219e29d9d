"""Checks for the whole run, tests/ and the package's doctests alike."""

from __future__ import annotations

import importlib.util
import shutil
import tempfile

import pytest

# the ONNX writer imports the optional onnx package at module level: no doctests to collect without it
collect_ignore_glob = [] if importlib.util.find_spec("onnx") else ["mxasync/onnx/graph_builder.py",
                                                                   "mxasync/onnx/write.py"]

_HYPOTHESIS_HOME: list[str] = []


def pytest_configure(config):
    """hypothesis keeps its example database and caches in ./.hypothesis by default (some written while
    tests are collected): the suite writes no file in the tree, so they go to a folder removed at the end."""
    try:
        import hypothesis.configuration
    except ImportError:  # a test extra; the doctests run without it
        return
    _HYPOTHESIS_HOME.append(tempfile.mkdtemp(prefix="mxasync-hypothesis-"))
    hypothesis.configuration.set_hypothesis_home_dir(_HYPOTHESIS_HOME[0])


def pytest_sessionfinish(session, exitstatus):
    """Tests start the profiler without dumping it; at exit mxasync would write their trace (MXNet's
    rule) to a folder that is gone or into the tree: the suite's process writes none."""
    import sys

    profiler = sys.modules.get("mxasync.runtime.profiler.core")
    if profiler is not None:
        profiler.current().undumped = False


def pytest_unconfigure(config):
    for path in _HYPOTHESIS_HOME:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(autouse=True)
def _temporary_files_under_tmp_path(tmp_path, monkeypatch):
    """What a test or doctest makes with ``tempfile`` lands in its own tmp_path, which pytest removes
    (see tmp_path_retention_policy): a run leaves no temporary folders behind."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # and in the processes a test starts
