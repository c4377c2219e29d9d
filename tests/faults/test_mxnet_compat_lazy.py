"""Issue 34, item 5: the ``mxnet-compat`` start-up hook imports nothing of mxasync (main imported all of
it at every interpreter start, and a broken mxasync printed a traceback in every Python of the
environment); the first ``import mxnet`` loads it, and a broken one gives one clear ``ImportError``."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.fault
ROOT = Path(__file__).resolve().parents[2]


def _site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    for name in ("mxnet_compat.py", "mxnet_compat.pth"):
        shutil.copy(ROOT / "compat" / "mxnet-compat" / name, site / name)
    return site


def _run(code: str, *paths: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(str(p) for p in paths))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env,
                          cwd=str(paths[0]))


def test_start_up_imports_nothing_of_mxasync(tmp_path):
    site = _site(tmp_path)
    code = (f"import site, sys; site.addsitedir({str(site)!r}); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mxasync', 'mxnet', 'numpy')))")
    res = _run(code, ROOT)
    assert res.returncode == 0 and res.stderr == "", res.stderr
    assert res.stdout.strip() == "[]"


def test_a_broken_mxasync_is_quiet_at_start_up_and_named_at_import_mxnet(tmp_path):
    site = _site(tmp_path)
    broken = tmp_path / "broken"
    (broken / "mxasync").mkdir(parents=True)
    (broken / "mxasync" / "__init__.py").write_text("raise RuntimeError('half-installed')\n")
    res = _run(f"import site; site.addsitedir({str(site)!r}); print('started')", broken)
    assert res.returncode == 0 and res.stdout.strip() == "started" and res.stderr == "", res.stderr
    res = _run(f"import site; site.addsitedir({str(site)!r})\ntry:\n    import mxnet\n"
               f"except ImportError as e:\n    print(e)", broken)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == ("import mxnet: mxnet-compat could not load mxasync (RuntimeError: half-installed); "
                                  "'pip uninstall mxnet-compat' turns the alias off")


def test_without_mxasync_import_mxnet_finds_nothing(tmp_path):
    site = _site(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    code = (f"import site; site.addsitedir({str(site)!r}); import importlib.util; "
            "print(importlib.util.find_spec('mxnet'))")
    res = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=str(empty)), cwd=str(empty))
    assert res.returncode == 0 and res.stdout.strip() == "None", res.stdout + res.stderr


def test_the_wheel_builds_without_a_package_index(tmp_path):
    """pip's isolated build needs only what [build-system] requires: nothing (main required setuptools>=68,
    which pip fetches, so an offline install failed)."""
    src = ROOT / "compat" / "mxnet-compat"
    text = (src / "pyproject.toml").read_text()
    assert "requires = []" in text and 'build-backend = "_backend"' in text and 'backend-path = ["."]' in text
    spec = importlib.util.spec_from_file_location("_mxnet_compat_backend", src / "_backend.py")
    backend = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(backend)
    name = backend.build_wheel(str(tmp_path))
    with zipfile.ZipFile(tmp_path / name) as z:
        names = set(z.namelist())
        assert {"mxnet_compat.py", "mxnet_compat.pth"} <= names
        record = z.read("mxnet_compat-1.9.1.0.dist-info/RECORD").decode()
        assert z.read("mxnet_compat.pth") == (src / "mxnet_compat.pth").read_bytes()
    assert "mxnet_compat.pth,sha256=" in record
    assert backend.build_sdist(str(tmp_path)).endswith(".tar.gz")
