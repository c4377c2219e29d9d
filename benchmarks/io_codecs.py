"""Benchmark JPEG decode/resize/encode across simplejpeg, OpenCV and Pillow (not a test; prints JSON).

    python benchmarks/io_codecs.py [--rounds 9] [--json out.json]

Libraries are timed in interleaved rounds (each round times every library once)
and the median round is reported, so background load skews them alike.
``gil_free`` is how fast a pure-Python loop runs while another thread decodes
(1.0: the decoder releases the GIL for its whole run; 0.5: it holds it half of
the time). ``x2_threads`` is the throughput of two threads over one.
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np


def photo_like(h: int, w: int, seed: int = 0) -> np.ndarray:
    """Smooth colour waves plus sensor-like noise: compresses roughly like a photograph."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    img = np.full((h, w, 3), 128.0, np.float32)
    for c in range(3):
        for _ in range(6):
            fx, fy, ph = rng.uniform(0.005, 0.08), rng.uniform(0.005, 0.08), rng.uniform(0, 6)
            img[..., c] += 40 * np.sin(fx * x + fy * y + ph)
    img += rng.normal(0, 8, img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


def per_call_us(fn: Callable[[], object], n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n * 1e6


def threads_rate(fn: Callable[[], object], n: int, threads: int) -> float:
    with ThreadPoolExecutor(threads) as pool:
        start = time.perf_counter()
        list(pool.map(lambda _: fn(), range(n)))
        return n / (time.perf_counter() - start)


def gil_free(fn: Callable[[], object], seconds: float = 0.5) -> float:
    def spin(t: float) -> int:
        count, end = 0, time.perf_counter() + t
        while time.perf_counter() < end:
            count += 1
        return count

    alone = spin(seconds)
    stop = threading.Event()

    def work() -> None:
        while not stop.is_set():
            fn()

    worker = threading.Thread(target=work)
    worker.start()
    shared = spin(seconds)
    stop.set()
    worker.join()
    return shared / alone


def interleaved(cases: dict[str, Callable[[], object]], n: int, rounds: int) -> dict[str, float]:
    times: dict[str, list[float]] = {k: [] for k in cases}
    for fn in cases.values():
        fn()
    for _ in range(rounds):
        for name, fn in cases.items():
            times[name].append(per_call_us(fn, n))
    return {k: round(statistics.median(v), 1) for k, v in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    import cv2
    import simplejpeg
    from PIL import Image

    cv2.setNumThreads(1)
    results: dict[str, object] = {"versions": {"simplejpeg": simplejpeg.__version__, "opencv": cv2.__version__,
                                               "pillow": Image.__version__}}
    for h, w in ((224, 224), (375, 500)):
        img = photo_like(h, w)
        out = io.BytesIO()
        Image.fromarray(img).save(out, format="JPEG", quality=90)
        buf, arr = out.getvalue(), np.frombuffer(out.getvalue(), np.uint8)
        decoders = {
            "simplejpeg": lambda buf=buf: simplejpeg.decode_jpeg(buf, colorspace="RGB"),
            "opencv": lambda arr=arr: cv2.imdecode(arr, cv2.IMREAD_COLOR),
            "pillow": lambda buf=buf: np.asarray(Image.open(io.BytesIO(buf)).convert("RGB")),
        }
        size = (256, 256) if h == 224 else (298, 224)  # up-scale a crop / shorter side 375 -> 224
        resizers = {
            "opencv": lambda img=img, size=size: cv2.resize(img, size, interpolation=cv2.INTER_LINEAR),
            "pillow": lambda img=img, size=size: np.asarray(Image.fromarray(img).resize(size, Image.BILINEAR)),
        }
        encoders = {
            "simplejpeg": lambda img=img: simplejpeg.encode_jpeg(img, quality=90, colorsubsampling="420"),
            "opencv": lambda img=img: cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 90]),
            "pillow": lambda img=img: Image.fromarray(img).save(io.BytesIO(), format="JPEG", quality=90),
        }
        n = 40 if h == 224 else 12
        entry = {
            "jpeg_bytes": len(buf),
            "decode_us": interleaved(decoders, n, args.rounds),
            "resize_us": interleaved(resizers, n, args.rounds),
            "encode_us": interleaved(encoders, n, args.rounds),
            "decode_x2_threads": {k: round(statistics.median(
                threads_rate(f, 8 * n, 2) / threads_rate(f, 8 * n, 1) for _ in range(3)), 2)
                for k, f in decoders.items()},
            "decode_gil_free": {k: round(statistics.median(gil_free(f) for _ in range(3)), 2)
                                for k, f in decoders.items()},
            "resize_gil_free": {k: round(statistics.median(gil_free(f) for _ in range(3)), 2)
                                for k, f in resizers.items()},
        }
        results[f"{w}x{h}"] = entry
    text = json.dumps(results, indent=1)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
