"""Every ```python block of README.md and docs/ runs as written.

The blocks of one page run in order, in one namespace, in a fresh interpreter whose
working directory is a temporary folder (pages build on their own earlier blocks,
and what they write lands in that folder). A block that needs something this machine
may lack says so on the line before it, with an HTML comment the reader does not see:
``<!-- requires: mpirun -->`` (skipped, with that reason, when the program or module is
missing).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
BLOCK = re.compile(r"(?:<!--\s*requires:\s*(?P<req>[^>]*?)\s*-->\s*\n)?```python\n(?P<code>.*?)```", re.S)


def _blocks(page: Path) -> list[tuple[str, list[str]]]:
    return [(m["code"], (m["req"] or "").split()) for m in BLOCK.finditer(page.read_text())]


def _missing(requirements: list[str]) -> list[str]:
    return [r for r in requirements if shutil.which(r) is None and importlib.util.find_spec(r) is None]


PAGES_WITH_CODE = [p for p in PAGES if _blocks(p)]


def test_pages_found():
    # the parametrisation below must not silently run nothing
    assert ROOT.joinpath("README.md") in PAGES_WITH_CODE and len(PAGES_WITH_CODE) >= 10


@pytest.mark.parametrize("page", PAGES_WITH_CODE, ids=lambda p: str(p.relative_to(ROOT)))
def test_page_runs(page: Path, tmp_path: Path):
    blocks = _blocks(page)
    missing = sorted({r for _, req in blocks for r in _missing(req)})
    if missing:
        pytest.skip(f"{page.name} needs {', '.join(missing)}, not installed here")
    script = tmp_path / "page.py"
    script.write_text("\n\n".join(code for code, _ in blocks))
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=240)
    assert run.returncode == 0, f"{page.relative_to(ROOT)}: its code blocks fail:\n{run.stderr[-3000:]}"
