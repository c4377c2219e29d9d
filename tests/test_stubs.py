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


@pytest.mark.parametrize("package", sorted(stubs.PACKAGES) + list(stubs.NP_PACKAGES))
def test_stub_is_current(package):
    path = stubs._path(package)
    assert path.parent == ROOT / "mxasync" / package.split(".")[1]
    text = stubs.render(package) if package in stubs.PACKAGES else stubs.render_np(package)
    assert path.read_text() == text, f"{path} is stale: run python -m mxasync.tools.stubs"


def _editable_site(tmp_path: Path) -> Path:
    """A virtual environment as ``pip install -e .`` leaves it (README): a path entry for the repository
    in its site-packages, nothing else (pyproject's package-dir makes setuptools write exactly that)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)], check=True,
                   timeout=120)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True, timeout=60).stdout.strip()
    Path(site, "__editable__.mxasync-0.1.0.pth").write_text(f"{ROOT}\n")
    return python


def test_the_editable_install_is_a_path_entry():
    """setuptools writes a plain path .pth (which mypy follows) only when package-dir maps "" (else an
    import hook mypy cannot see through: every mxasync name was Any)."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["tool"]["setuptools"]["package-dir"] == {"": "."}
    assert (ROOT / "mxasync" / "py.typed").exists() and "py.typed" in meta["tool"]["setuptools"]["package-data"]["mxasync"]


def test_mypy_checks_scripts_after_the_readmes_install_without_mypypath(tmp_path):
    pytest.importorskip("mypy")
    python = _editable_site(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    for example in sorted((ROOT / "examples" / "typing").glob("*.py")):
        shutil.copy(example, work / f"good_{example.name}")
    (work / "bad.py").write_text(
        "import mxasync as mx\n\nx = mx.nd.onez((2,))\ny: int = mx.nd.ones((2,))\nz: int = mx.sym.Variable('a')\n"
        "a = mx.np.onez((2,))\nb: int = mx.np.einsum('ii', mx.np.eye(2))\nc: str = mx.np.shape(mx.np.ones((2,)))\n"
        "d = mx.np.linalg.nrom(mx.np.eye(2))\n")
    env = {k: v for k, v in os.environ.items() if k not in ("MYPYPATH", "PYTHONPATH")}
    res = subprocess.run([sys.executable, "-m", "mypy", "--python-executable", str(python), "--follow-imports=silent",
                          "--no-incremental", "--cache-dir", os.devnull, "--python-version", "3.11",
                          *sorted(p.name for p in work.glob("*.py"))],
                         capture_output=True, text=True, cwd=work, env=env, timeout=300)
    errors = [line for line in res.stdout.splitlines() if ": error:" in line]
    assert [e.split(":")[0] for e in errors] == ["bad.py"] * 7, res.stdout[-3000:]
    assert 'Module has no attribute "onez"' in errors[0] and 'Module has no attribute "onez"' in errors[3]
    assert '"NDArray", variable has type "int"' in errors[1] and '"Symbol", variable has type "int"' in errors[2]
    assert '"ndarray", variable has type "int"' in errors[4] and '"tuple[int, ...]", variable has type "str"' in errors[5]
    assert 'Module has no attribute "nrom"' in errors[6]


@pytest.mark.parametrize("name, call, want", [
    ("shape", lambda np: np.shape(np.ones((2, 3))), tuple), ("ndim", lambda np: np.ndim(np.ones((2,))), int),
    ("allclose", lambda np: np.allclose(np.ones(2), np.ones(2)), bool),
    ("split", lambda np: np.split(np.ones(4), 2), list), ("nonzero", lambda np: np.nonzero(np.ones(2)), tuple),
    ("einsum", lambda np: np.einsum("ii", np.eye(2)), "ndarray"), ("svd", lambda np: np.linalg.svd(np.eye(2)), tuple),
    ("shuffle", lambda np: np.random.shuffle(np.ones(3)), type(None)),
])
def test_np_stub_return_types_are_what_the_functions_return(name, call, want):
    import mxasync as mx

    got = call(mx.np)
    assert isinstance(got, mx.np.ndarray if want == "ndarray" else want)
    declared = stubs._NP_RETURNS.get(name, "ndarray")
    assert declared.split("[")[0].replace("builtins.", "") == {"ndarray": "ndarray", tuple: "tuple", int: "int",
                                                               bool: "bool", list: "list", type(None): "None"}[want]
