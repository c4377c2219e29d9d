"""gluon.data benchmarks: prints JSON.

Samples/s of a DataLoader epoch over 32x32x3 uint8 images with ``transform_first(Compose([ToTensor(),
Normalize(...)]))`` and batch 64: in the calling thread, with 2 thread workers, with 2 process workers
(``thread_pool=False``, shared memory) and through ``async for``; against a plain numpy loop doing the
same work (cast, scale, transpose, normalise, stack) in the same run. Also the time to start a pool of
process workers (the first one starts the forkserver).

    python benchmarks/gluon_data.py [--quick]
"""

from __future__ import annotations

import json
import sys
import time

import anyio
import numpy as np

import mxasync as mx
from mxasync.gluon.data import ArrayDataset, DataLoader
from mxasync.gluon.data.vision import transforms as T

MEAN, STD = (0.49, 0.48, 0.45), (0.25, 0.24, 0.26)


def _rate(fn, items: int, repeat: int) -> float:
    fn()  # warm-up (pools, caches)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return items / best


def _numpy_epoch(x: np.ndarray, batch: int) -> None:
    mean = np.array(MEAN, np.float32)[:, None, None]
    std = np.array(STD, np.float32)[:, None, None]
    for s in range(0, len(x), batch):
        out = [((img.astype(np.float32) / 255).transpose(2, 0, 1) - mean) / std for img in x[s:s + batch]]
        np.stack(out)


def _loader_epoch(loader) -> None:
    for data, _label in loader:
        data.wait_to_read()


def _async_epoch(loader) -> None:
    async def main():
        async for data, _label in loader:
            await data.wait_to_read_async()

    anyio.run(main)


def main(quick: bool) -> None:
    n, batch, repeat = (512, 64, 2) if quick else (2048, 64, 3)
    x = np.random.default_rng(0).integers(0, 256, (n, 32, 32, 3), dtype=np.uint8)
    ds = ArrayDataset(mx.nd.array(x, dtype="uint8"), np.arange(n)).transform_first(
        T.Compose([T.ToTensor(), T.Normalize(MEAN, STD)]))
    out: dict = {"samples": n, "batch": batch, "image": [32, 32, 3]}
    out["numpy_loop_samples_per_s"] = _rate(lambda: _numpy_epoch(x, batch), n, repeat)
    for name, kwargs in (("in_thread", {}), ("threads_2", {"num_workers": 2}),
                         ("processes_2", {"num_workers": 2, "thread_pool": False})):
        with DataLoader(ds, batch, **kwargs) as loader:
            out[f"dataloader_{name}_samples_per_s"] = _rate(lambda loader=loader: _loader_epoch(loader), n, repeat)
    with DataLoader(ds, batch, num_workers=2) as loader:
        out["dataloader_async_for_threads_2_samples_per_s"] = _rate(lambda: _async_epoch(loader), n, repeat)
    starts = []
    for _ in range(2):
        t0 = time.perf_counter()
        with DataLoader(ds, batch, num_workers=4, thread_pool=False) as loader:
            next(iter(loader))
            starts.append(time.perf_counter() - t0)
    out["process_pool_4_first_batch_s"] = {"first_pool": round(starts[0], 2), "second_pool": round(starts[1], 2)}
    print(json.dumps({k: (round(v, 1) if isinstance(v, float) else v) for k, v in out.items()}, indent=1))


if __name__ == "__main__":
    main("--quick" in sys.argv)
