"""Dependencies point down: no module imports from a layer above its own, not even inside a function.

The layers, lowest first (docs/architecture.md draws them)::

    base < runtime < backends < operator < ndarray < autograd < symbol < executor
         < kvstore / io / module / training stack < gluon < front ends

Every ``import`` and ``from ... import`` in every module of the package is read with
``ast`` (those inside functions and methods too; only ``if TYPE_CHECKING:`` blocks,
which never run, are skipped) and resolved to the module it names.  A module above
the layer of the importing one is an error, unless the pair is in ``ALLOWED`` with
the reason.  A lower layer that needs something from above gets a small protocol
the upper layer installs (autograd's recorder in ``ndarray/_recording.py``, the
executor's cached-op hook), never an import.
"""

from __future__ import annotations

import ast
import functools
import os
import subprocess
import sys
from pathlib import Path

import mxasync

PACKAGE = Path(mxasync.__file__).parent

#: the layer of each top-level module or package of mxasync (the first name after ``mxasync.``)
LAYERS = {
    # foundations every layer may use: errors, the class registry, atomic files, the seams' slots
    "base": 0, "registry": 0, "atomic": 0, "_seams": 0, "_numpy_op_doc": 0, "_pyhelpers": 0, "error": 0, "log": 0,
    "_bfloat16": 0,                                             # the bfloat16 numpy dtype (ml_dtypes)
    "_ctypes_names": 0,                                         # mx.base's ctypes handles and helpers
    "runtime": 1, "engine": 1, "profiler": 1,                  # the last two re-export runtime
    "util": 1,                                                  # env and np-shape helpers; counts GPUs
    "backends": 2, "context": 2,          # mx.context: runtime's contexts, with the backends' device types
    "operator": 3,
    "ndarray": 4, "random": 4,                                  # mx.random samples NDArrays
    "autograd": 5,
    "numpy": 5, "numpy_extension": 5,                         # mx.np / mx.npx: arrays of the engine, recorded
    "symbol": 6, "viz": 6, "visualization": 6, "name": 6, "attribute": 6,  # viz draws symbols; mx.name, mx.attribute
    "executor": 7,
    # the training stack: stores, data, optimizers and the things a fit loop uses
    "kvstore": 8, "io": 8, "recordio": 8, "image": 8, "module": 8, "optimizer": 8, "lr_scheduler": 8,
    "initializer": 8, "metric": 8, "callback": 8, "monitor": 8, "model": 8, "rnn": 8,
    "onnx": 8,                                                  # mx.onnx: symbols and params to ONNX files
    "gluon": 9,
    # front ends over everything: AMP, the test helpers, the command line and its training jobs
    "contrib": 10, "test_utils": 10, "tools": 10, "train": 10, "cli": 10, "__main__": 10,
    "serving": 10,                                              # mxasync.serving: Predictor, ModelServer, `mxasync serve`
    "mxnet_alias": 10,                                          # `import mxnet` answered with mxasync
    "loading": 10,                                              # mx.preload: imports the heavy packages
    "numpy_op_signature": 10,                                   # op names -> mx.np / mx.npx functions
}

#: (importing module, imported module) pairs allowed to point up, each with its reason
ALLOWED: dict[tuple[str, str], str] = {
    # MXNet's mx.autograd module hands out Symbol and get_symbol (which builds a Symbol from the tape);
    # the face looks them up on first use, and nothing below the face imports the symbol layer
    ("mxasync.autograd", "mxasync.symbol"): "mx.autograd.Symbol and mx.autograd.get_symbol",
    ("mxasync.autograd", "mxasync.symbol._recorded"): "mx.autograd.get_symbol",
    # MXNet's mx.npx.image re-exports mx.image's functions beside its ops; the face looks them up on
    # first use of a name that is not an op
    ("mxasync.numpy_extension.image", "mxasync.image"): "mx.npx.image's imread, imresize, augmenters",
}


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST):
    """Every Import / ImportFrom node, outside ``if TYPE_CHECKING:`` blocks, in source order."""
    stack = [tree]
    found = []
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))


def _exists(module: str) -> bool:
    path = PACKAGE.parent.joinpath(*module.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def _targets(module: str, is_package: bool, node) -> list[str]:
    """The mxasync modules an import statement of ``module`` names."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "mxasync"]
    if node.level:
        base = module.split(".")
        if not is_package:
            base.pop()
        base = base[:len(base) - (node.level - 1)]
        source = ".".join(base + ([node.module] if node.module else []))
    else:
        source = node.module or ""
    if source.split(".")[0] != "mxasync":
        return []
    out = []
    for alias in node.names:  # ``from pkg import sub`` names the submodule when there is one
        sub = f"{source}.{alias.name}"
        out.append(sub if alias.name != "*" and _exists(sub) else source)
    return out


def _layer(module: str) -> int | None:
    parts = module.split(".")
    if len(parts) < 2:
        return None  # mxasync itself: the lazy top-level face over everything
    return LAYERS[parts[1]]


@functools.cache
def _all_imports() -> list[tuple[str, int, str]]:
    """``(importing module, line, imported module)`` for every mxasync import in the package."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in _imports(tree):
            for target in _targets(module, path.name == "__init__.py", node):
                out.append((module, node.lineno, target))
    return out


def _violations() -> list[str]:
    found = []
    for module, line, target in _all_imports():
        own, layer = _layer(module), _layer(target)
        if own is None or layer is None or layer <= own or (module, target) in ALLOWED:
            continue
        src, dst = module.split(".")[1], target.split(".")[1]
        found.append(f"{module}:{line} imports {target} (layer {dst} is above {src})")
    return found


def test_every_top_level_module_has_a_layer():
    names = {p.stem if p.suffix == ".py" else p.name for p in PACKAGE.iterdir()
             if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").exists()}
    assert sorted(names - set(LAYERS)) == []


def test_no_module_imports_from_a_layer_above_its_own():
    bad = _violations()
    assert bad == [], "upward imports:\n" + "\n".join(bad)


def test_the_allow_list_holds_no_stale_entry():
    """Every allowed pair is still an import somewhere, so the list only shrinks."""
    used = {(module, target) for module, _, target in _all_imports()}
    assert sorted(set(ALLOWED) - used) == []


def test_the_walker_sees_imports_inside_functions():
    """The check reads a function's imports and resolves relative ones (so it can fail)."""
    src = "def f():\n    from ..executor import cached_op\n    import mxasync.gluon\n"
    nodes = list(_imports(ast.parse(src)))
    got = [t for n in nodes for t in _targets("mxasync.ndarray.ndarray", False, n)]
    assert got == ["mxasync.executor.cached_op", "mxasync.gluon"]
    assert all(_layer(t) > _layer("mxasync.ndarray.ndarray") for t in got)


def test_a_subpackage_imports_on_its_own_and_loads_nothing_above_it():
    """``import mxasync.runtime`` (or ndarray, or symbol) works alone and leaves the layers above unloaded."""
    script = (
        "import importlib, sys\n"
        "pkg, above = sys.argv[1], sys.argv[2].split(',')\n"
        "importlib.import_module(pkg)\n"
        "print(sorted({n.split('.')[1] for n in sys.modules if n.count('.') and n.split('.')[1] in above}))\n")
    stack = ["runtime", "backends", "operator", "ndarray", "autograd", "symbol", "executor", "gluon"]
    for pkg in ("runtime", "ndarray", "symbol"):
        above = stack[stack.index(pkg) + 1:]
        res = subprocess.run([sys.executable, "-c", script, f"mxasync.{pkg}", ",".join(above)],
                             env=dict(os.environ, MXASYNC_PRELOAD="0"),  # no background load of everything
                             capture_output=True, text=True, timeout=120)
        assert res.returncode == 0, res.stderr[-2000:]
        assert res.stdout.strip() == "[]", f"import mxasync.{pkg} loaded {res.stdout.strip()}"
