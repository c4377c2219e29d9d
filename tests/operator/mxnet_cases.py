"""Fixture files of op cases recorded with MXNet 1.9.1 (``<case>/spec``, ``<case>/in0``, ``out0``, ...)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np


def load_cases(path: Path) -> dict[str, dict]:
    """``{case: {"spec": dict, "in0": array, ...}}`` from an ``.npz`` written by a make_fixtures.py."""
    cases: dict[str, dict] = {}
    with np.load(path) as z:
        for key in z.files:
            case, name = key.split("/", 1)
            cases.setdefault(case, {})[name] = z[key]
    for arrays in cases.values():
        arrays["spec"] = json.loads(str(arrays["spec"]))
    return cases


def numbered(arrays: dict, prefix: str) -> list[np.ndarray]:
    """``arrays[prefix0], arrays[prefix1], ...`` in order."""
    return [arrays[f"{prefix}{i}"] for i in range(sum(k.startswith(prefix) for k in arrays))]
