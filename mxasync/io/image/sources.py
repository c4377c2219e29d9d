"""Side inputs of the record-image pipeline: ``.lst`` label lists and ``mean_img`` files.

``load_imglist`` reads an im2rec list (``index<TAB>label...<TAB>path``) into a
map from record id to its ``label_width`` labels, which replace the labels
stored in the records (MXNet's ``path_imglist``). ``load_mean_img`` and
``save_mean_img`` read and write a mean image in ``mx.nd.save`` format, as one
array named ``mean_img`` of shape ``(C, H, W)``.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "x.lst")
>>> _ = open(path, "w").write("3\\t1.5\\t2\\ta.jpg\\n7\\t4\\t0\\tb.jpg\\n")
>>> {k: v.tolist() for k, v in load_imglist(path, 2).items()}
{3: [1.5, 2.0], 7: [4.0, 0.0]}
"""

from __future__ import annotations

import os

import numpy as np

from ...base import MXAsyncError
from ...ndarray._serialization import load_arrays, save_arrays

__all__ = ["load_imglist", "load_mean_img", "save_mean_img"]


def load_imglist(path: str | os.PathLike[str], label_width: int) -> dict[int, np.ndarray]:
    """``{record id: float32 labels (label_width,)}`` from a tab-separated ``.lst`` file."""
    labels: dict[int, np.ndarray] = {}
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise MXAsyncError(f"path_imglist: cannot read {os.fspath(path)!r}: {e}") from e
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) < label_width + 2:
            raise MXAsyncError(f"{os.fspath(path)}:{number}: expected index, {label_width} label(s) and a path "
                               f"separated by tabs, got {len(fields)} field(s): {line!r}")
        try:
            key = int(float(fields[0]))
            labels[key] = np.array([float(v) for v in fields[1:1 + label_width]], np.float32)
        except ValueError as e:
            raise MXAsyncError(f"{os.fspath(path)}:{number}: {e}: {line!r}") from None
    return labels


def load_mean_img(path: str | os.PathLike[str], shape: tuple[int, int, int]) -> np.ndarray:
    """The ``mean_img`` array of an ``mx.nd.save`` file as float32 ``shape`` (C, H, W)."""
    loaded = load_arrays(path)
    if isinstance(loaded, dict):
        record = loaded.get("mean_img") or (next(iter(loaded.values())) if len(loaded) == 1 else None)
    else:
        record = loaded[0] if len(loaded) == 1 else None
    if record is None or record.array is None:
        raise MXAsyncError(f"mean_img: {os.fspath(path)!r} holds no array named 'mean_img'")
    mean = np.asarray(record.array, np.float32)
    if mean.shape != tuple(shape):
        raise MXAsyncError(f"mean_img: {os.fspath(path)!r} has shape {mean.shape} but data_shape is {tuple(shape)}")
    return mean


def save_mean_img(path: str | os.PathLike[str], mean: np.ndarray) -> None:
    """Write ``mean`` as ``{'mean_img': mean}`` in ``mx.nd.save`` format (readable by ``mx.nd.load``)."""
    save_arrays(path, {"mean_img": np.ascontiguousarray(mean, np.float32)})
