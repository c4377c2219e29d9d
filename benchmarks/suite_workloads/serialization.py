"""``nd.save`` / ``nd.load`` of a dict of 200000 small arrays (4 float32 each), against ``torch.save`` /
``torch.load`` of a dict of as many tensors.  One step writes (``nd_save``) or reads (``nd_load``) the
whole file, in ``cfg['data_dir']``; the arrays are made once per process, outside the timing."""

from __future__ import annotations

import os

import numpy as np

from .common import Bench

COUNT, SIZE = 200_000, 4
_made: dict = {}  # framework name -> the dict of arrays (made once: both workloads use it)


def _values() -> np.ndarray:
    return np.random.default_rng(0).standard_normal((COUNT, SIZE)).astype(np.float32)


def _arrays(key: str, make):
    if key not in _made:
        _made.clear()
        _made[key] = {f"arg:param{i}": make(row) for i, row in enumerate(_values())}
    return _made[key]


def _bench(name: str, path: str, arrays: dict, save, load) -> Bench:
    if name == "nd_save":
        return Bench(lambda: save(path, arrays))
    if not os.path.exists(path):
        save(path, arrays)
    return Bench(lambda: load(path), {"file_mb": round(os.path.getsize(path) / 2**20, 2)})


def build_mx(mx, name: str, cfg: dict) -> Bench:
    arrays = _arrays(mx.__name__, mx.nd.array)
    return _bench(name, os.path.join(cfg["data_dir"], f"{mx.__name__}.params"), arrays, mx.nd.save, mx.nd.load)


def build_torch(torch, name: str, cfg: dict) -> Bench:
    arrays = _arrays("torch", lambda row: torch.from_numpy(row.copy()))
    return _bench(name, os.path.join(cfg["data_dir"], "torch.pt"), arrays,
                  lambda path, obj: torch.save(obj, path), torch.load)
