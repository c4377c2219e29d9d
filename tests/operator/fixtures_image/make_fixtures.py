"""Record MXNet 1.9.1's mx.nd.image results for tests/operator/test_image_ops.py.

Run with the reference interpreter: /work/mxref/bin/python tests/operator/fixtures_image/make_fixtures.py
"""

import os

import mxnet as mx
import numpy as np

rng = np.random.RandomState(0)
img8 = rng.randint(0, 256, (5, 7, 3)).astype(np.uint8)
imgf = (rng.uniform(0, 255, (5, 7, 3))).astype(np.float32)
out = {"img8": img8, "imgf": imgf}
for name, img in (("u8", img8), ("f32", imgf)):
    x = mx.nd.array(img, dtype=img.dtype)
    for i, (size, keep, interp) in enumerate([((3, 2), False, 1), ((11, 9), False, 1), (4, True, 1), (4, False, 1),
                                              ((3, 2), False, 0), ((10, 8), False, 0)]):
        out[f"resize_{name}_{i}"] = mx.nd.image.resize(x, size, keep, interp).asnumpy()
    for f in (0.5, 1.3):
        for op in ("brightness", "contrast", "saturation", "hue"):
            out[f"{op}_{name}_{f}"] = getattr(mx.nd.image, "random_" + op)(x, f, f).asnumpy()
    out[f"lighting_{name}"] = mx.nd.image.adjust_lighting(x, alpha=(0.1, -0.2, 0.3)).asnumpy()
    out[f"to_tensor_{name}"] = mx.nd.image.to_tensor(x).asnumpy()
    out[f"crop_{name}"] = mx.nd.image.crop(x, 1, 2, 4, 3).asnumpy()
    out[f"flip_lr_{name}"] = mx.nd.image.flip_left_right(x).asnumpy()
    out[f"flip_tb_{name}"] = mx.nd.image.flip_top_bottom(x).asnumpy()
t = mx.nd.image.to_tensor(mx.nd.array(img8, dtype="uint8"))
out["normalize"] = mx.nd.image.normalize(t, mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225)).asnumpy()
out["normalize_1"] = mx.nd.image.normalize(t, mean=(0.5,), std=(0.25,)).asnumpy()
batch = mx.nd.array(np.stack([img8, img8[::-1]]), dtype="uint8")
out["to_tensor_batch"] = mx.nd.image.to_tensor(batch).asnumpy()
out["normalize_batch"] = mx.nd.image.normalize(mx.nd.image.to_tensor(batch), mean=(0.1, 0.2, 0.3),
                                               std=(0.3, 0.2, 0.1)).asnumpy()
out["resize_batch"] = mx.nd.image.resize(batch, (4, 3), False, 1).asnumpy()
np.savez_compressed(os.path.join(os.path.dirname(os.path.abspath(__file__)), "mxnet_image.npz"), **out)
print(len(out), "arrays")
