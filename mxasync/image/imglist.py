"""The image lists of ``ImageIter``: an im2rec ``.lst`` file or an in-memory ``imglist``.

Both give ``(labels, keys)``: ``labels[key] = (label array, image path)`` and the
keys in list order. ``.lst`` lines are ``index<TAB>label...<TAB>path`` (keys are
the int indices); ``imglist`` items are ``[label, path]``, ``[[labels...], path]``
or ``[label1, label2, ..., path]`` (keys are ``"1"``, ``"2"``, ... as in MXNet).

>>> labels, keys = from_imglist([[1, "a.jpg"], [[2, 3], "b.jpg"]], "float32")
>>> keys, labels["2"][0].tolist(), labels["2"][1]
(['1', '2'], [2.0, 3.0], 'b.jpg')
"""

from __future__ import annotations

import os
from numbers import Number

import numpy as np

from ._arrays import ImageError

__all__ = ["read_lst", "from_imglist"]


def read_lst(path: str | os.PathLike[str], dtype: str) -> tuple[dict[int, tuple[np.ndarray, str]], list[int]]:
    """Read an im2rec ``.lst`` file (blank lines are skipped)."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise ImageError(f"ImageIter: cannot read path_imglist {os.fspath(path)!r}: {e.strerror or e}") from None
    labels: dict[int, tuple[np.ndarray, str]] = {}
    keys: list[int] = []
    for number, line in enumerate(lines, 1):
        fields = line.strip().split("\t")
        if fields == [""]:
            continue
        try:
            if len(fields) < 3:
                raise ValueError(f"expected index, label(s) and path separated by tabs, got {len(fields)} field(s)")
            key = int(fields[0])
            label = np.array([float(v) for v in fields[1:-1]]).astype(dtype)
        except ValueError as e:
            raise ImageError(f"ImageIter: {os.fspath(path)}:{number}: {e}: {line!r}") from None
        labels[key] = (label, fields[-1])
        keys.append(key)
    return labels, keys


def from_imglist(imglist: list, dtype: str) -> tuple[dict[str, tuple[np.ndarray, str]], list[str]]:
    """Labels and keys (``"1"``, ``"2"``, ...) of an in-memory ``imglist``."""
    labels: dict[str, tuple[np.ndarray, str]] = {}
    keys: list[str] = []
    for index, item in enumerate(imglist, 1):
        try:
            if len(item) < 2:
                raise ValueError("needs a label and a path")
            if len(item) > 2:
                value = item[:-1]
            elif isinstance(item[0], Number):
                value = [item[0]]
            else:
                value = item[0]
            label = np.asarray(value, np.float64).ravel().astype(dtype)
        except (TypeError, ValueError) as e:
            raise ImageError(f"ImageIter: imglist item {index - 1} must be [label(s), path], got {item!r} ({e})") \
                from None
        key = str(index)
        labels[key] = (label, item[-1])
        keys.append(key)
    return labels, keys
