"""The op path is written once (issue 31), counted from the source.

``mxasync/operator/step.py`` is the one step builder: it constructs the ``OpContext`` a kernel
gets, asks an op whether it runs asynchronously, and calls its kernel functions (the sparse
storage fallback it runs does too); imperative calls, the tape's backward and bound graphs go
through it, and the sparse twins of those three are gone.
"""

from __future__ import annotations

import ast
import functools
import pathlib
import re

import pytest

PKG = pathlib.Path(__file__).resolve().parents[1] / "mxasync"


@functools.cache
def _read() -> tuple:
    return tuple((p.relative_to(PKG.parent).as_posix(), p.read_text()) for p in sorted(PKG.rglob("*.py")))


@functools.cache
def _parsed(name: str) -> ast.Module:
    return ast.parse(dict(_read())[name])


def _sources():
    """(path, text) of every module of the package, read once for all the counts."""
    return _read()


@functools.cache
def _code(name: str) -> tuple:
    return tuple(_code_lines(_parsed(name), dict(_read())[name]))


def _code_lines(tree: ast.Module, text: str):
    """Source lines outside docstrings and comments (doctest examples may build an OpContext by hand)."""
    skip = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(getattr(body[0], "value", None), ast.Constant) and isinstance(body[0].value.value, str):
            skip.update(range(body[0].lineno, body[0].end_lineno + 1))
    for k, line in enumerate(text.splitlines(), 1):
        if k not in skip and not line.lstrip().startswith("#"):
            yield k, line


def _where(pattern: str) -> set[str]:
    rx = re.compile(pattern)
    return {name for name, _ in _sources() for _, line in _code(name) if rx.search(line)}


# what is counted, the pattern, and the modules allowed to match it
RULES = [
    ("constructs an OpContext for a kernel call", r"\bOpContext\(",
     {"mxasync/operator/step.py", "mxasync/operator/base.py"}),  # base.py: the class and its repr
    ("asks an op whether it runs asynchronously (push_sync or push_async)", r"\.asynchronous\(",
     {"mxasync/operator/step.py"}),
    ("calls an op's kernel functions", r"\.(forward|backward)(_async)?_fn\(",
     {"mxasync/operator/step.py", "mxasync/operator/sparse/dispatch.py", "mxasync/operator/sparse/elemwise.py"}),
    ("probes an op for a fact it should declare", r"getattr\(\w*prop\w*, \"|hasattr\(\w*prop\w*, \"", set()),
]


@pytest.mark.parametrize(("what", "pattern", "allowed"), RULES, ids=[r[0] for r in RULES])
def test_one_place(what, pattern, allowed):
    found = _where(pattern)
    assert found <= allowed, f"outside the step builder, {sorted(found - allowed)} {what}"


def test_the_sparse_twins_are_gone():
    names = {name for name, _ in _sources()}
    assert "mxasync/ndarray/_sparse_invoke.py" not in names
    assert "mxasync/autograd/sparse_grad.py" not in names
    assert not _where(r"def (compile_sparse|invoke_sparse|backward_node)\b")


def test_storage_py_means_one_thing():
    """The storage allocator; storage types live in ``stypes.py`` and ``sparse/formats.py`` (sparse values)."""
    found = {name for name, _ in _sources() if name.endswith("/storage.py")}
    assert found <= {"mxasync/runtime/storage.py", "mxasync/operator/sparse/formats.py"}, found


def _length(fn) -> int:
    """A function's lines, its docstring left out (a long docstring is no sign of a function doing two things)."""
    n = fn.end_lineno - fn.lineno + 1
    first = fn.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        n -= first.end_lineno - first.lineno + 1
    return n


def test_at_most_three_functions_over_80_lines():
    long = []
    for name, _ in _sources():
        for node in ast.walk(_parsed(name)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _length(node) > 80:
                long.append(f"{name}:{node.name} ({_length(node)} lines)")
    assert len(long) <= 3, long


def test_no_grab_bag_modules():
    """Modules are named for their family, not for being left over (``extra``, ``more``, ``misc``)."""
    vague = {name for name, _ in _sources()
             if re.search(r"(^|_)(extra|more|misc)\.py$", name.rsplit("/", 1)[-1])}
    assert not vague, sorted(vague)
