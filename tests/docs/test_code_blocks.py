"""Every ```python block of README.md and docs/ runs as written, with no hidden setup.

The blocks of one page run in order, in one namespace, in a fresh interpreter whose
working directory is a temporary folder (pages build on their own earlier blocks, which
the reader sees, and what they write lands in that folder). Nothing runs that the reader
does not see: a code block inside an HTML comment is refused. Two markers, HTML comments
on the line before a block, tell the test what the prose tells the reader:

* ``<!-- requires: mpirun -->``: the block needs that program or module (the page is
  skipped, with that reason, when it is missing);
* ``<!-- file: pkg/mod.py -->``: the prose says to save the block as that file; it is
  written there (relative to the page's folder) before the page's blocks run, not run
  itself.

``docs/backend_plugins.md`` is also built as a package from its file blocks alone,
installed into a temporary folder, and its installed-package check run in a fresh process.
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
FENCE = re.compile(r"(?:<!--\s*(?P<mark>requires|file):\s*(?P<arg>[^>]*?)\s*-->\s*\n)?```(?P<lang>[\w-]*)\n(?P<code>.*?)```",
                   re.S)
COMMENT = re.compile(r"<!--(.*?)-->", re.S)


def _fences(page: Path) -> list[dict]:
    text = COMMENT.sub(lambda m: m[0] if "```" not in m[1] else "", page.read_text())  # hidden blocks: not run
    return [m.groupdict() for m in FENCE.finditer(text)]


def _blocks(page: Path) -> list[tuple[str, list[str]]]:
    """The page's python blocks to run: (code, requirements)."""
    return [(f["code"], (f["arg"] or "").split() if f["mark"] == "requires" else [])
            for f in _fences(page) if f["lang"] == "python" and f["mark"] != "file"]


def _files(page: Path) -> dict[str, str]:
    return {f["arg"]: f["code"] for f in _fences(page) if f["mark"] == "file"}


def _missing(requirements: list[str]) -> list[str]:
    return [r for r in requirements if shutil.which(r) is None and importlib.util.find_spec(r) is None]


def _run(script: Path, cwd: Path, pythonpath: list[str]) -> subprocess.CompletedProcess:
    env = dict(os.environ, MPLBACKEND="Agg",
               PYTHONPATH=os.pathsep.join([*pythonpath, str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, str(script)], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=240)


PAGES_WITH_CODE = [p for p in PAGES if _blocks(p)]


def test_pages_found():
    # the parametrisation below must not silently run nothing
    assert ROOT.joinpath("README.md") in PAGES_WITH_CODE and len(PAGES_WITH_CODE) >= 10


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_hidden_setup(page: Path):
    hidden = [m[1].strip()[:60] for m in COMMENT.finditer(page.read_text()) if "```" in m[1]]
    assert not hidden, f"{page.relative_to(ROOT)}: code the reader does not see (in an HTML comment): {hidden}"


@pytest.mark.parametrize("page", PAGES_WITH_CODE, ids=lambda p: str(p.relative_to(ROOT)))
def test_page_runs(page: Path, tmp_path: Path):
    blocks = _blocks(page)
    missing = sorted({r for _, req in blocks for r in _missing(req)})
    if missing:
        pytest.skip(f"{page.name} needs {', '.join(missing)}, not installed here")
    for name, code in _files(page).items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(code)
    script = tmp_path / "page.py"
    script.write_text("\n\n".join(code for code, _ in blocks))
    run = _run(script, tmp_path, [])
    assert run.returncode == 0, f"{page.relative_to(ROOT)}: its code blocks fail:\n{run.stderr[-3000:]}"


def test_the_plugin_page_builds_a_plugin_that_works_installed(tmp_path: Path):
    """docs/backend_plugins.md alone: its files make a package that, installed, serves its device type in a
    fresh process that never imports it first (entry-point discovery), with its storage, copies and override."""
    sys.path.insert(0, str(ROOT / "tests" / "plugins"))
    try:
        from install import install
    finally:
        sys.path.remove(str(ROOT / "tests" / "plugins"))
    page = ROOT / "docs" / "backend_plugins.md"
    files = _files(page)
    assert set(files) == {"mxasync_mydev/__init__.py", "pyproject.toml"}
    src = tmp_path / "src"
    for name, code in files.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(code)
    site = install(src, tmp_path / "site")
    installed_check = _blocks(page)[-1][0]
    assert installed_check.startswith("import mxasync as mx\n\nctx = mx.Context(\"mydev\", 0)")
    (tmp_path / "elsewhere").mkdir()
    script = tmp_path / "elsewhere" / "check.py"
    script.write_text(installed_check + "\nprint(sorted(mxasync_mydev.STATS))\n")
    run = _run(script, tmp_path / "elsewhere", [str(site)])
    assert run.returncode == 0, run.stderr[-3000:]
    assert "alloc" in run.stdout and "from_storage" in run.stdout and "free" not in run.stderr
