"""Backend plugin packages installed for the tests into a temporary folder on ``sys.path``.

They are never installed into the environment running the tests (tests/plugins/install.py
lays them out as an installer would, under pytest's tmp_path_factory).
"""

from __future__ import annotations

import importlib
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "plugins"))
from install import install  # noqa: E402

sys.path.remove(str(ROOT / "tests" / "plugins"))

TOY = ROOT / "tests" / "plugins" / "toy_backend"
EXAMPLE = ROOT / "examples" / "backend_plugin"


def _on_path(site: pathlib.Path):
    from mxasync.backends import registry

    sys.path.insert(0, str(site))
    importlib.invalidate_caches()
    registry.reset()
    try:
        yield site
    finally:
        sys.path.remove(str(site))
        importlib.invalidate_caches()
        registry.reset()


@pytest.fixture(scope="session")
def plugin_site(tmp_path_factory) -> pathlib.Path:
    """A folder holding both plugin packages, for ``PYTHONPATH`` of child processes."""
    site = tmp_path_factory.mktemp("plugins") / "site"
    install(TOY, site)
    install(EXAMPLE, site)
    return site


@pytest.fixture
def toy_plugin(plugin_site):
    yield from _on_path(plugin_site)


@pytest.fixture
def example_plugin(plugin_site):
    """The example plugin (examples/backend_plugin) importable in this process; its module."""
    for _ in _on_path(plugin_site):
        import mxasync_toy_device

        yield mxasync_toy_device
