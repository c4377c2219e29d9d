"""Counts from the source that issue 31 asks to hold: one op path, generic kernels, the numpy speed behind its seam.

Each row of ``COUNTS`` names a rule, a function that lists the sites breaking it (read from the source with
``ast``, so comments, docstrings and strings never count) and how many are allowed.  A failure prints the
sites.  Add a row per rule; keep the counting functions small.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable
from pathlib import Path

import pytest

import mxasync

PACKAGE = Path(mxasync.__file__).parent

#: names a module binds the numpy module to (``import numpy as np`` and its variants)
NUMPY_NAMES = frozenset({"np", "numpy", "_np", "_numpy", "onp"})


@functools.cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def _modules(folder: str) -> list[Path]:
    return sorted((PACKAGE / folder).rglob("*.py"))


def _site(path: Path, node: ast.AST) -> str:
    return f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"


def _names_numpy(node: ast.expr) -> bool:
    return (isinstance(node, ast.Name) and node.id in NUMPY_NAMES) or (
        isinstance(node, ast.Attribute) and node.attr in NUMPY_NAMES)


def _asks_for_numpy(node: ast.Compare) -> bool:
    """``x is np`` / ``x is not numpy`` (either side), or ``x.__name__ == "numpy"``."""
    operands = [node.left, *node.comparators]
    if any(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
        return any(_names_numpy(o) for o in operands)
    if any(isinstance(op, (ast.Eq, ast.NotEq)) for op in node.ops):
        named = any(isinstance(o, ast.Attribute) and o.attr == "__name__" for o in operands)
        return named and any(isinstance(o, ast.Constant) and o.value == "numpy" for o in operands)
    return False


def numpy_tests_in_operator() -> list[str]:
    """A kernel that asks whether its namespace is numpy: numpy speed belongs in the numpy backend's overrides
    (``mxasync/backends/numpy/kernels``), reached through ``register_override``/``find_override``."""
    return [_site(p, n) for p in _modules("operator") for n in ast.walk(_tree(p))
            if isinstance(n, ast.Compare) and _asks_for_numpy(n)]


def imports_in_kernels_init() -> list[str]:
    """``operator/kernels/__init__.py`` re-exports nothing: a convolution loads only the kernels it uses."""
    path = PACKAGE / "operator" / "kernels" / "__init__.py"
    return [_site(path, n) for n in ast.walk(_tree(path)) if isinstance(n, (ast.Import, ast.ImportFrom))]


def _imported(path: Path, node: ast.AST) -> list[str]:
    """The absolute module names an import statement of ``path`` names (relative ones resolved)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if not node.level:
        return [node.module or ""]
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    base = parts[:len(parts) - node.level]
    source = ".".join(base + ([node.module] if node.module else []))
    return [source] + [f"{source}.{a.name}" for a in node.names]


def backend_imports_in_generic_kernels() -> list[str]:
    """The generic kernels (``operator/kernels``) import no backend: they run on any array namespace."""
    return [_site(p, n) for p in _modules("operator/kernels") for n in ast.walk(_tree(p))
            if any(m.startswith("mxasync.backends") for m in _imported(p, n))]


def module_handles_in_kernels() -> list[str]:
    """No ``_mod_*`` handle on a kernel module (the re-exporting ``__init__`` needed them; nothing uses them)."""
    return [_site(p, n) for p in _modules("operator") for n in ast.walk(_tree(p))
            if isinstance(n, (ast.Import, ast.ImportFrom)) and any((a.asname or "").startswith("_mod_")
                                                                    for a in n.names)]


#: (rule, the sites breaking it, how many may)
COUNTS: list[tuple[str, Callable[[], list[str]], int]] = [
    ("no `xp is numpy` test in operator/", numpy_tests_in_operator, 0),
    ("operator/kernels/__init__.py imports nothing", imports_in_kernels_init, 0),
    ("generic kernels import no backend", backend_imports_in_generic_kernels, 0),
    ("no _mod_* module handles", module_handles_in_kernels, 0),
]


@pytest.mark.parametrize("rule,count,allowed", COUNTS, ids=[c[0] for c in COUNTS])
def test_count(rule, count, allowed):
    sites = count()
    assert len(sites) <= allowed, f"{rule}: {len(sites)} sites (at most {allowed}):\n" + "\n".join(sites)


def test_the_numpy_test_counter_sees_every_spelling():
    """The counter is not blind: it finds each spelling in a snippet (and none in the generic ones)."""
    snippet = ast.parse("a = xp is np\nb = xp is not numpy\nc = numpy is xp\nd = xp.__name__ == 'numpy'\n"
                        "e = xp is cupy\nf = xp.add.at\n")
    found = [n.lineno for n in ast.walk(snippet) if isinstance(n, ast.Compare) and _asks_for_numpy(n)]
    assert found == [1, 2, 3, 4]
