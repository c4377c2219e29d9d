"""Install a plugin package into a folder for ``PYTHONPATH``: never into the environment running the tests.

``install(src, site)`` lays the package out as an installer would (its modules and a
``<name>-<version>.dist-info`` with ``METADATA`` and ``entry_points.txt``, PEP 376/566),
read from the package's own ``pyproject.toml``.  ``importlib.metadata`` then finds its
entry points as soon as ``site`` is on ``sys.path`` (or ``PYTHONPATH`` in a child process).
Nothing is built and nothing is written next to the sources, so the tree stays clean.
"""

from __future__ import annotations

import pathlib
import shutil

try:
    import tomllib
except ImportError:  # Python 3.10: pytest itself depends on tomli there
    import tomli as tomllib

__all__ = ["install"]


def install(src: pathlib.Path, site: pathlib.Path) -> pathlib.Path:
    """Install the package at ``src`` into ``site``; returns ``site``."""
    meta = tomllib.loads((src / "pyproject.toml").read_text())
    project = meta["project"]
    site.mkdir(parents=True, exist_ok=True)
    for pkg in meta["tool"]["setuptools"]["packages"]:
        shutil.copytree(src / pkg, site / pkg, ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True)
    name = project["name"]
    info = site / f"{name.replace('-', '_')}-{project['version']}.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {project['version']}\n")
    (info / "INSTALLER").write_text("mxasync-tests\n")
    lines = []
    for group, eps in project.get("entry-points", {}).items():
        lines.append(f"[{group}]")
        lines += [f"{key} = {value}" for key, value in eps.items()]
        lines.append("")
    (info / "entry_points.txt").write_text("\n".join(lines))
    return site
