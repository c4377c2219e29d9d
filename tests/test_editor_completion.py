"""Editors complete the lazy package (issue 26): jedi (what IPython, VS Code's Jedi and many editors run)
completes ``mx.nd.`` and ``mx.gluon.`` in a script that does ``import mxasync as mx``, and in a live session."""

from __future__ import annotations

from pathlib import Path

import pytest

jedi = pytest.importorskip("jedi")

ROOT = Path(__file__).resolve().parents[1]


def _complete(code: str, tmp_path) -> set[str]:
    project = jedi.Project(path=str(tmp_path), added_sys_path=[str(ROOT)], smart_sys_path=False)
    script = jedi.Script(code, path=str(tmp_path / "script.py"), project=project,
                         environment=jedi.InterpreterEnvironment())
    lines = code.splitlines()
    return {c.name for c in script.complete(len(lines), len(lines[-1]))}


@pytest.mark.parametrize("attr, expected", [
    ("nd", {"ones", "zeros", "array", "NDArray", "Convolution", "relu", "contrib", "waitall"}),
    ("gluon", {"nn", "Block", "HybridBlock", "Trainer", "Parameter", "data", "loss", "rnn"}),
    ("sym", {"Variable", "FullyConnected", "load_json", "Group"}),
])
def test_jedi_completes_a_script(tmp_path, attr, expected):
    got = _complete(f"import mxasync as mx\nmx.{attr}.", tmp_path)
    assert expected <= got, sorted(expected - got)


def test_jedi_completes_an_array_and_a_live_session(tmp_path):
    assert {"asnumpy", "shape", "reshape", "wait_to_read"} <= _complete("import mxasync as mx\nmx.nd.ones((2,)).", tmp_path)
    import mxasync as mx

    live = {c.name for c in jedi.Interpreter("mx.nd.", [{"mx": mx}]).complete()}
    assert {"ones", "zeros", "Convolution"} <= live


def test_jedi_completes_mx_np_and_shows_its_docstrings(tmp_path):
    names = _complete("import mxasync as mx\nmx.np.", tmp_path)
    assert {"ones", "einsum", "dot", "ndarray", "linalg", "random", "float32", "pi"} <= names
    assert {"norm", "svd"} <= _complete("import mxasync as mx\nmx.np.linalg.", tmp_path)
    assert {"asnumpy", "reshape", "T", "shape"} <= _complete("import mxasync as mx\nmx.np.ones((2,)).", tmp_path)
    project = jedi.Project(path=str(tmp_path), added_sys_path=[str(ROOT)], smart_sys_path=False)
    code = "import mxasync as mx\nmx.np.einsum"
    script = jedi.Script(code, path=str(tmp_path / "script.py"), project=project,
                         environment=jedi.InterpreterEnvironment())
    (einsum,) = [c for c in script.complete(2, len("mx.np.einsum")) if c.name == "einsum"]
    assert "Einstein summation" in einsum.docstring() and "mx.np.einsum" in einsum.docstring()
