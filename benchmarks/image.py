"""``mx.image.ImageIter`` throughput: prints JSON.

ImageIter images/s on 256x320 JPEGs in a ``.rec`` file, resized (shorter side 256) and
centre-cropped to 3x224x224, cast and normalised (``CreateAugmenter(resize=256,
mean=True, std=True)``), in batches of 32; against a plain loop doing the same work
with OpenCV (decode, resize, crop, cast, normalise, HWC->CHW into a numpy batch)
in the same run. Both are single-threaded, as MXNet's ImageIter is.

    python benchmarks/image.py [--quick]
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _timing import best  # noqa: E402

import mxasync as mx  # noqa: E402
from mxasync.io.recordio import IRHeader, MXRecordIO, pack_img  # noqa: E402


def photo_like(h: int, w: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    img = np.stack([128 + 60 * np.sin(rng.uniform(0.01, 0.08) * x + rng.uniform(0.01, 0.08) * y + p)
                    for p in rng.uniform(0, 6, 3)], axis=2)
    return np.clip(img + rng.normal(0, 8, img.shape), 0, 255).astype(np.uint8)


def main() -> None:
    quick = "--quick" in sys.argv
    n, batch = (64, 32) if quick else (256, 32)
    path = os.path.join(tempfile.mkdtemp(), "bench.rec")
    with MXRecordIO(path, "w") as rec:
        for i in range(n):
            rec.write(pack_img(IRHeader(0, float(i % 10), i, 0), photo_like(256, 320, i % 16), quality=90))
    mean, std = np.array([123.68, 116.28, 103.53], np.float32), np.array([58.395, 57.12, 57.375], np.float32)

    it = mx.image.ImageIter(batch, (3, 224, 224), path_imgrec=path, resize=256, mean=True, std=True)

    def epoch_imageiter() -> None:
        it.reset()
        for b in it:
            b.data[0].wait_to_read()

    def epoch_cv2() -> None:
        import cv2

        from mxasync.io.recordio import unpack

        with MXRecordIO(path, "r") as rec:
            out = np.empty((batch, 3, 224, 224), np.float32)
            i = 0
            while (s := rec.read()) is not None:
                _, buf = unpack(s)
                img = cv2.cvtColor(cv2.imdecode(np.frombuffer(buf, np.uint8), cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)
                h, w = img.shape[:2]
                nh, nw = (256 * h // w, 256) if h > w else (256, 256 * w // h)
                img = cv2.resize(img, (nw, nh), interpolation=cv2.INTER_CUBIC)
                y0, x0 = (nh - 224) // 2, (nw - 224) // 2
                crop = (img[y0:y0 + 224, x0:x0 + 224].astype(np.float32) - mean) / std
                out[i % batch] = crop.transpose(2, 0, 1)
                i += 1

    repeat = 2 if quick else 3
    t_iter, t_cv2 = best(epoch_imageiter, repeat), best(epoch_cv2, repeat)
    print(json.dumps({
        "images": n, "batch_size": batch, "image": "256x320 JPEG -> 3x224x224",
        "imageiter_images_per_s": round(n / t_iter, 1),
        "cv2_loop_images_per_s": round(n / t_cv2, 1),
        "imageiter_over_cv2": round(t_cv2 / t_iter, 3),
    }, indent=2))


if __name__ == "__main__":
    main()
