"""Data-iterator benchmarks: prints JSON.

* NDArrayIter batches/s (every batch copied out and finished on the engine) against plain
  numpy slicing of the same array in the same run, sequential and shuffled, sync and ``async for``.
* Batch assembly, us/image: augmented uint8 HxWxC crops (half of them mirrored views) into a
  normalised float32 NCHW NDArray batch, as the pipeline does it (``write_chw`` with per-image
  normalisation in the worker, the batch wrapped as an NDArray without a copy) against the
  straightforward way (numpy transposing cast, per-batch normalisation, ``mx.nd.array`` copy).
* ImageRecordIter images/s decoding and augmenting 224x224 JPEGs (random crop to 200x200,
  random mirror, mean/std) with ``preprocess_threads`` workers, against a plain
  single-threaded Pillow loop doing the same work in the same run.

    python benchmarks/io.py [--quick]
"""

from __future__ import annotations

import io
import json
import os
import sys
import tempfile
import time

import anyio
import numpy as np

import mxasync as mx
from mxasync.io import ImageRecordIter, NDArrayIter
from mxasync.io.recordio import IRHeader, MXRecordIO, pack_img


def _rate(fn, items: int, repeat: int) -> float:
    """Best items/s over ``repeat`` runs of ``fn`` (one epoch each), after a warm-up run."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return items / best


# -- NDArrayIter ---------------------------------------------------------------------------------

def _ndarray_iter_case(x: np.ndarray, y: np.ndarray, batch: int, shuffle: bool, repeat: int) -> dict:
    n = len(x)
    batches = n // batch
    it = NDArrayIter(x, y, batch, shuffle=shuffle, last_batch_handle="discard")
    perm = np.random.default_rng(1).permutation(n)

    def epoch():
        it.reset()
        for _ in it:
            pass
        mx.nd.waitall()

    async def epoch_async_body():
        await it.reset_async()
        async for _ in it:
            pass
        await mx.nd.waitall_async()

    def numpy_epoch():
        for i in range(batches):
            s = slice(i * batch, (i + 1) * batch)
            if shuffle:
                _ = x[perm[s]], y[perm[s]]
            else:
                _ = x[s].copy(), y[s].copy()

    ours = _rate(epoch, batches, repeat)
    ours_async = _rate(lambda: anyio.run(epoch_async_body), batches, repeat)
    ref = _rate(numpy_epoch, batches, repeat)
    return {"bench": "NDArrayIter", "shape": list(x.shape), "batch_size": batch, "shuffle": shuffle,
            "batches_per_s": round(ours), "async_for_batches_per_s": round(ours_async),
            "numpy_slicing_batches_per_s": round(ref), "ratio_vs_numpy": round(ours / ref, 3)}


def bench_ndarray_iter(n: int, feat: int, batch: int, repeat: int) -> list[dict]:
    x = np.random.default_rng(0).random((n, feat), dtype=np.float32)
    y = np.arange(n, dtype=np.float32)
    return [_ndarray_iter_case(x, y, batch, shuffle, repeat) for shuffle in (False, True)]


# -- ImageRecordIter vs Pillow ---------------------------------------------------------------------

_MEAN = np.array([123.68, 116.28, 103.53], np.float32)
_STD = np.array([58.395, 57.12, 57.375], np.float32)


def _photo(seed: int, size: int = 224) -> np.ndarray:
    """Smooth colour waves plus noise: compresses roughly like a photograph."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32)
    img = np.stack([128 + 60 * np.sin(rng.uniform(0.01, 0.08) * xx + rng.uniform(0.01, 0.08) * yy + p)
                    for p in rng.uniform(0, 6, 3)], axis=2)
    return np.clip(img + rng.normal(0, 8, img.shape), 0, 255).astype(np.uint8)


def _pillow_epoch(jpegs: list[bytes], batch: int, crop: int, seed: int) -> None:
    """The plain baseline: one thread, Pillow decode, numpy crop/mirror, per-batch mean/std."""
    from PIL import Image

    rng = np.random.default_rng(seed)
    for start in range(0, len(jpegs) - batch + 1, batch):
        out = np.empty((batch, 3, crop, crop), np.float32)
        for slot, buf in enumerate(jpegs[start:start + batch]):
            img = np.asarray(Image.open(io.BytesIO(buf)).convert("RGB"))
            y, x = rng.integers(0, img.shape[0] - crop + 1), rng.integers(0, img.shape[1] - crop + 1)
            img = img[y:y + crop, x:x + crop]
            if rng.random() < 0.5:
                img = img[:, ::-1]
            out[slot] = img.transpose(2, 0, 1)
        out -= _MEAN[:, None, None]
        out /= _STD[:, None, None]


def bench_batch_assembly(batch: int, repeat: int) -> list[dict]:
    from mxasync.io.image.augment import normalize_batch, per_channel
    from mxasync.io.image.pipeline import write_chw
    from mxasync.ndarray import NDArray
    from mxasync.ndarray._chunk import Chunk

    crop = 200
    imgs = [_photo(i % 16) for i in range(batch)]
    views = [im[10:10 + crop, 12:12 + crop] if i % 2 else im[10:10 + crop, 12 + crop - 1:11:-1]
             for i, im in enumerate(imgs)]
    sub = per_channel(_MEAN, 0.0, 3, "mean")
    mul = np.float32(1.0) / per_channel(_STD, 1.0, 3, "std")
    ctx = mx.cpu()

    def ours():
        data = np.empty((batch, 3, crop, crop), np.float32)
        for slot, img in enumerate(views):
            dst = data[slot]
            write_chw(dst, img)
            dst -= sub
            dst *= mul
        return NDArray(Chunk(data, ctx), data)

    def straightforward():
        data = np.empty((batch, 3, crop, crop), np.float32)
        for slot, img in enumerate(views):
            data[slot] = img.transpose(2, 0, 1)
        normalize_batch(data, _MEAN, _STD, out=data)
        return mx.nd.array(data, ctx=ctx)

    np.testing.assert_allclose(ours().asnumpy(), straightforward().asnumpy(), rtol=1e-5, atol=1e-5)
    rates = {name: _rate(fn, batch, repeat) for name, fn in (("ours", ours), ("straightforward", straightforward))}
    return [{"bench": "batch assembly", "image": f"{crop}x{crop}x3 uint8 crop views, half mirrored",
             "batch_size": batch, "us_per_image": round(1e6 / rates["ours"], 1),
             "straightforward_us_per_image": round(1e6 / rates["straightforward"], 1)}]


def bench_image_record_iter(n: int, batch: int, threads: int, repeat: int) -> list[dict]:
    crop = 200
    jpegs = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bench.rec")
        with MXRecordIO(path, "w") as w:
            for i in range(n):
                record = pack_img(IRHeader(0, float(i % 10), i, 0), _photo(i % 16)[:, :, ::-1].copy(), quality=90)
                w.write(record)
                jpegs.append(record[24:])  # the JPEG after the 24-byte IRHeader
        it = ImageRecordIter(path_imgrec=path, data_shape=(3, crop, crop), batch_size=batch, rand_crop=True,
                             rand_mirror=True, preprocess_threads=threads, round_batch=False, seed_aug=0,
                             mean_r=_MEAN[0], mean_g=_MEAN[1], mean_b=_MEAN[2],
                             std_r=_STD[0], std_g=_STD[1], std_b=_STD[2])

        def epoch():
            it.reset()
            for _ in it:
                pass
            mx.nd.waitall()

        with it:
            ours = _rate(epoch, n, repeat)
        ref = _rate(lambda: _pillow_epoch(jpegs, batch, crop, 0), n, repeat)
    return [{"bench": "ImageRecordIter", "images": n, "jpeg": "224x224 q90", "augment": "rand_crop 200, mirror, "
             "mean/std", "batch_size": batch, "preprocess_threads": threads, "images_per_s": round(ours),
             "pillow_single_thread_images_per_s": round(ref), "ratio_vs_pillow": round(ours / ref, 2)}]


def main() -> None:
    quick = "--quick" in sys.argv
    rows = []
    rows += bench_ndarray_iter(6000 if quick else 60000, 784, 128, 2 if quick else 5)
    rows += bench_ndarray_iter(4000 if quick else 20000, 3 * 32 * 32, 64, 2 if quick else 3)
    rows += bench_batch_assembly(32, 5 if quick else 30)
    rows += bench_image_record_iter(128 if quick else 512, 32, 2, 1 if quick else 3)
    print(json.dumps({"cpu_count": os.cpu_count(), "results": rows}, indent=1))


if __name__ == "__main__":
    main()
