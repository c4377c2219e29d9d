"""Checks for the whole run, tests/ and the package's doctests alike."""

from __future__ import annotations

import tempfile

import pytest


@pytest.fixture(autouse=True)
def _temporary_files_under_tmp_path(tmp_path, monkeypatch):
    """What a test or doctest makes with ``tempfile`` lands in its own tmp_path, which pytest removes
    (see tmp_path_retention_policy): a run leaves no temporary folders behind."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # and in the processes a test starts
