"""Install the toy backend plugin (tests/plugins/toy_backend) once per session if it is missing."""

from __future__ import annotations

import importlib.metadata
import pathlib
import subprocess
import sys

import pytest

TOY = pathlib.Path(__file__).resolve().parents[1] / "plugins" / "toy_backend"


@pytest.fixture(scope="session")
def toy_plugin():
    try:
        importlib.metadata.distribution("mxasync-toy-backend")
    except importlib.metadata.PackageNotFoundError:
        res = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                              "-e", str(TOY)], capture_output=True, text=True)
        if res.returncode:
            pytest.skip(f"could not install the toy backend plugin: {res.stderr[-500:]}")
        importlib.invalidate_caches()
        site = [p for p in sys.path if p.endswith("site-packages")]
        import site as _site

        for p in site:
            _site.addsitedir(p)  # pick up the editable install's .pth in this process
    from mxasync.backends import registry

    registry.reset()
    yield
    registry.reset()
