"""The ``mxasync`` command dispatcher."""

from __future__ import annotations

import subprocess
import sys

from mxasync import cli


def test_help_lists_commands(capsys):
    assert cli.main([]) == 0
    out = capsys.readouterr().out
    assert "im2rec" in out


def test_unknown_command_is_an_error(capsys):
    assert cli.main(["frobnicate"]) == 2
    assert "unknown command" in capsys.readouterr().err


def test_console_entry_point_runs():
    proc = subprocess.run([sys.executable, "-m", "mxasync.cli", "--help"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0 and "commands:" in proc.stdout
