"""Type checkers and editors see the public API: the generated stubs are current and mypy uses them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mxasync.tools import stubs

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("package", sorted(stubs.PACKAGES))
def test_stub_is_current(package):
    path = ROOT / package.replace(".", "/") / "__init__.pyi"
    assert path.read_text() == stubs.render(package), f"{path} is stale: run python -m mxasync.tools.stubs"


def test_mypy_checks_a_script_through_the_lazy_package(tmp_path):
    pytest.importorskip("mypy")
    shutil.copy(ROOT / "examples" / "typing" / "typed_script.py", tmp_path / "good.py")
    (tmp_path / "bad.py").write_text("import mxasync as mx\n\nx = mx.nd.onez((2,))\ny: int = mx.nd.ones((2,))\n"
                                     "z: int = mx.sym.Variable('a')\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT), MYPYPATH=str(ROOT))
    res = subprocess.run([sys.executable, "-m", "mypy", "--follow-imports=silent", "--no-incremental",
                          "--cache-dir", os.devnull, "--python-version", "3.11", "good.py", "bad.py"],
                         capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    errors = [line for line in res.stdout.splitlines() if ": error:" in line]
    assert [e.split(":")[0] for e in errors] == ["bad.py"] * 3, res.stdout[-3000:]
    assert 'Module has no attribute "onez"' in errors[0]
    assert '"NDArray", variable has type "int"' in errors[1] and '"Symbol", variable has type "int"' in errors[2]
