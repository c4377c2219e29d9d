"""MXNet 1.9.1's whole public Python surface, name by name (tests/fixtures/mxnet/python_surface.json,
recorded by make_python_surface.py under MXNet 1.9.1): every public name of every public module exists
here with a signature that accepts the calls MXNet's accepts, or docs/porting.md lists it under
"Not provided" with the reason (a line ``* `pattern`, ...: reason``; a reason starting "signature differs"
excuses a signature only). A name of an implementation module that its package exports is checked at the
package (porting.md says so)."""

from __future__ import annotations

import fnmatch
import importlib
import inspect
import json
import re
import warnings
from pathlib import Path

import pytest

import mxasync

ROOT = Path(__file__).resolve().parent.parent
SURFACE = json.loads((ROOT / "tests" / "fixtures" / "mxnet" / "python_surface.json").read_text(encoding="utf-8"))
MODULES = SURFACE["modules"]


def not_provided() -> dict[str, str]:
    """Pattern -> reason from porting.md's "Not provided" section: a line ``* `mxnet.a.b`, `mxnet.c*`: why``.
    A pattern names a module (and everything in it), a name, or an fnmatch pattern over dotted names."""
    text = (ROOT / "docs" / "porting.md").read_text(encoding="utf-8")
    section = text.split("## Not provided", 1)[1].split("\n## ", 1)[0]
    found = {}
    for line in section.splitlines():
        if not line.startswith("* "):
            continue
        patterns = re.findall(r"`(mxnet(?:\.[\w*]+)*)`", line)
        reason = line.split(":", 1)[1].strip() if ":" in line else ""
        for pattern in patterns:
            found[pattern] = reason
    return found


LISTED = not_provided()
# a line whose reason starts "signature differs" excuses a signature, never a missing name
NOT_PROVIDED = {k: v for k, v in LISTED.items() if not v.startswith("signature differs")}
SIGNATURE_DIFFERS = {k: v for k, v in LISTED.items() if v.startswith("signature differs")}


def excused(dotted: str, listed: dict[str, str] | None = None) -> str | None:
    for pattern in NOT_PROVIDED if listed is None else listed:
        if dotted == pattern or dotted.startswith(pattern + ".") or fnmatch.fnmatchcase(dotted, pattern):
            return pattern
    return None


def ours_module(modname: str):
    """mxasync's module for MXNet's dotted module name: the import, else the attribute path (``mx.nd.np``)."""
    rest = modname[len("mxnet"):]
    try:
        return importlib.import_module("mxasync" + rest)
    except ImportError:
        pass
    obj = mxasync
    for part in rest.split(".")[1:]:
        if not hasattr(obj, part):
            return None
        obj = getattr(obj, part)
    return obj


def implementation_module(modname: str) -> bool:
    """A module of MXNet's that is not a package, inside a package below ``mxnet``'s top level."""
    return modname.count(".") >= 2 and not any(m.startswith(modname + ".") for m in MODULES)


def elsewhere(dotted: str) -> bool:
    """``dotted`` (``package.name``) is here."""
    modname, name = dotted.rsplit(".", 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mod = ours_module(modname)
    return mod is not None and hasattr(mod, name)


def incompatible(theirs: list, ours) -> str | None:
    """Why a call MXNet's signature accepts would fail on ours (None when every such call binds)."""
    if all(kind.startswith("VAR_") for _, kind, _ in theirs) and not any(n != "args" for n, _, _ in theirs[:1]):
        return None  # MXNet's (*args, **kwargs): a pass-through whose calls the signature does not tell
    try:
        sig = inspect.signature(ours)
    except (TypeError, ValueError):
        return None
    params = [p for p in sig.parameters.values() if p.name != "self"]
    kinds = {p.kind for p in params}
    var_pos, var_kw = inspect.Parameter.VAR_POSITIONAL in kinds, inspect.Parameter.VAR_KEYWORD in kinds
    by_name = {p.name: p for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    their_positional = [n for n, kind, _ in theirs if kind in ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD")]
    while their_positional and their_positional[-1] in ("out", "name", "attr"):  # an op's trailing out=, name=,
        their_positional.pop()  # attr=: MXNet's generated functions take them by keyword
    for i, name in enumerate(their_positional):
        if i < len(positional) and positional[i].name != name:
            return f"positional argument {i} is {positional[i].name!r}, MXNet's {name!r}"
        if i >= len(positional) and not var_pos:
            return f"takes {len(positional)} positional arguments, MXNet's {len(their_positional)}"
    for name, kind, _ in theirs:
        if kind in ("POSITIONAL_OR_KEYWORD", "KEYWORD_ONLY"):
            p = by_name.get(name)
            if (p is None or p.kind is p.POSITIONAL_ONLY) and not var_kw:
                return f"no keyword {name!r}"
    # *data, *symbols: inputs given by position; a wrapper's *args, **kwargs passes through what it is given
    if any(kind == "VAR_POSITIONAL" and name != "args" for name, kind, _ in theirs) and not var_pos:
        return f"no *{next(n for n, kind, _ in theirs if kind == 'VAR_POSITIONAL')}"
    # a default of None stands for "not given" (MXNet's generated functions give every input one): requiring
    # such a parameter refuses no call that worked there
    theirs_optional = {n for n, kind, default in theirs if default not in (None, "None") or kind.startswith("VAR")}
    for p in params:
        required = p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        if required and p.name in theirs_optional:
            return f"requires {p.name!r}, optional in MXNet"
        if required and p.name not in {n for n, _, _ in theirs}:
            return f"requires {p.name!r}, which MXNet's has not"
    return None


def gaps(modname: str) -> list[str]:
    """What of MXNet's module ``modname`` is neither here (compatibly) nor listed as not provided."""
    info = MODULES[modname]
    if "import_error" in info or excused(modname):
        return []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mod = ours_module(modname)
    if mod is None:
        return [f"{modname}: no such module"]
    found = []
    for name, desc in info["names"].items():
        dotted = f"{modname}.{name}"
        if excused(dotted):
            continue
        if not hasattr(mod, name):
            # a name of an implementation module (mxnet.numpy.multiarray.abs, mxnet.image.image.ImageIter):
            # provided at its package (porting.md says so)
            if not (implementation_module(modname) and elsewhere(f"{modname.rsplit('.', 1)[0]}.{name}")):
                found.append(f"{dotted}: missing")
            continue
        if desc["kind"] in ("function", "class") and desc.get("params") is not None:
            why = incompatible(desc["params"], getattr(mod, name))
            if why and not excused(dotted, SIGNATURE_DIFFERS):
                found.append(f"{dotted}{desc['sig']}: {why}")
    return found


@pytest.mark.parametrize("modname", sorted(MODULES))
def test_mxnet_names_present_or_listed(modname):
    assert gaps(modname) == []


def test_listed_names_are_mxnets_and_give_a_reason():
    """Every "not provided" entry names something MXNet 1.9.1 has, says why, and is not provided."""
    known = set(MODULES) | {f"{m}.{n}" for m, info in MODULES.items() for n in info.get("names", {})}
    for pattern, reason in LISTED.items():
        assert reason, pattern
        assert any(k == pattern or fnmatch.fnmatchcase(k, pattern) for k in known), pattern


def test_the_check_sees_a_missing_name_and_a_bad_signature():
    assert incompatible([["data", "KEYWORD_ONLY", None]], lambda x: x) == "no keyword 'data'"
    assert incompatible([["data", "POSITIONAL_OR_KEYWORD", None]], lambda x: x) == \
        "positional argument 0 is 'x', MXNet's 'data'"
    assert incompatible([["a", "POSITIONAL_OR_KEYWORD", None], ["b", "POSITIONAL_OR_KEYWORD", "1"]],
                        lambda b=1, a=0: a) == "positional argument 0 is 'b', MXNet's 'a'"
    assert incompatible([["a", "POSITIONAL_OR_KEYWORD", "0"]], lambda a: a) == "requires 'a', optional in MXNet"
    assert incompatible([["a", "POSITIONAL_OR_KEYWORD", "None"]], lambda a: a) is None
    assert incompatible([["data", "VAR_POSITIONAL", None]], lambda a: a) == "no *data"
    assert incompatible([["a", "POSITIONAL_OR_KEYWORD", None]], lambda *args, **kwargs: 0) is None
