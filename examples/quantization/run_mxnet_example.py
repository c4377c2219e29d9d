"""Run MXNet 1.9.1's ``example/quantization`` scripts, unmodified, on mxasync (through the ``mxnet``
alias) and on MXNet itself, with the same small stand-in model and data, and compare accuracies.

    python examples/quantization/run_mxnet_example.py [--mxnet-python /work/venvs/mx191/bin/python]

What it does, in a scratch directory:

1. reads ``imagenet_gen_qsym_mkldnn.py``, ``imagenet_inference.py`` and the ``common/`` helpers from
   MXNet's git tree at tag 1.9.1 (``--git-dir``; the scripts are not part of this repository);
2. trains a stand-in model with mxasync: a small model_zoo ``ResNetV1`` (BasicBlockV1, one block per
   stage, 8-64 channels) on the bundled 8x8 digits, upsampled to 3x16x16, pixels 0..255 normalised
   with the ImageNet mean / std the example uses for ``resnet*_v1``, exported as a Gluon model; and
   packs calibration (train split) and validation images into RecordIO;
3. writes a stand-in ``gluoncv`` package whose ``model_zoo.get_model`` returns that model (a
   ``SymbolBlock`` of whichever framework runs the example): the example's "pretrained" path then
   converts it, calibrates and quantizes it as it would ``resnet18_v1``.  (Its ``--no-pretrained``
   path divides by a zero std and calibrates on NaN under MXNet itself, so it cannot be used.);
4. runs ``imagenet_gen_qsym_mkldnn.py --model resnet18_v1 --calib-mode <mode>`` under each
   framework, then ``imagenet_inference.py`` on the float and the quantized model under each, and
   prints the accuracies as JSON (``--out`` to save them).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IMAGE = (3, 16, 16)
MODEL = "resnet18_v1"  # the name picks the example's settings for a ResNet v1 (mean / std, exclusions)
RGB_MEAN, RGB_STD = (123.68, 116.779, 103.939), (58.393, 57.12, 57.375)
N_VAL = 350  # a multiple of the batch size: every image is scored whatever order a reader shuffles into
BATCH = 50


def export_scripts(git_dir: str, tag: str, dest: str) -> None:
    def show(path):
        return subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{tag}:{path}"], check=True,
                              capture_output=True).stdout

    for name in ("imagenet_gen_qsym_mkldnn.py", "imagenet_inference.py"):
        with open(os.path.join(dest, name), "wb") as f:
            f.write(show(f"example/quantization/{name}"))
    os.makedirs(os.path.join(dest, "common"), exist_ok=True)
    for name in ("__init__.py", "modelzoo.py", "util.py"):
        with open(os.path.join(dest, "common", name), "wb") as f:
            f.write(show(f"example/image-classification/common/{name}"))
    stub = os.path.join(dest, "gluoncv")
    os.makedirs(os.path.join(stub, "model_zoo"), exist_ok=True)
    with open(os.path.join(stub, "__init__.py"), "w") as f:
        f.write('"""Stand-in: the example imports gluoncv; --no-pretrained never calls it."""\nfrom . import utils\n')
    with open(os.path.join(stub, "utils.py"), "w") as f:
        f.write("")
    with open(os.path.join(stub, "model_zoo", "__init__.py"), "w") as f:
        f.write("import os\nimport mxnet as mx\n\n\ndef get_model(name, **kwargs):\n"
                "    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'standin')\n"
                "    return mx.gluon.SymbolBlock.imports(os.path.join(here, 'net-symbol.json'), ['data'],\n"
                "                                        os.path.join(here, 'net-0000.params'))\n")


def digits_images():
    import mxasync as mx

    images, labels = mx.io.datasets.load_digits()
    x = np.kron(images.astype(np.float32) * (255.0 / 16.0), np.ones((2, 2), np.float32))  # 16x16, 0..255
    x = np.repeat(x[:, None], 3, axis=1).round()
    rng = np.random.RandomState(0)
    order = rng.permutation(len(x))
    return x[order], labels[order].astype(np.float32)


def train_stand_in(out_dir: str, x, y, epochs: int) -> None:
    import mxasync as mx
    from mxasync.gluon.model_zoo.vision.resnet import BasicBlockV1, ResNetV1

    mx.random.seed(0)
    net = ResNetV1(BasicBlockV1, [1, 1, 1, 1], [8, 8, 16, 32, 64], classes=10, thumbnail=True, prefix="tinyres_")
    net.initialize(mx.init.Xavier(magnitude=2.0))
    net.hybridize()
    trainer = mx.gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.003})
    x = (x - np.array(RGB_MEAN, np.float32).reshape(1, 3, 1, 1)) / np.array(RGB_STD, np.float32).reshape(1, 3, 1, 1)
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    for _ in range(epochs):
        for i in range(0, len(x), 64):
            data, label = mx.nd.array(x[i:i + 64]), mx.nd.array(y[i:i + 64])
            with mx.autograd.record():
                loss = loss_fn(net(data), label)
            loss.backward()
            trainer.step(len(data))
    net.export(os.path.join(out_dir, "net"), 0)


def write_rec(path: str, x, y) -> None:
    import mxasync as mx

    rec = mx.recordio.MXRecordIO(path, "w")
    for i, (img, label) in enumerate(zip(x, y, strict=True)):
        hwc = np.ascontiguousarray(img.transpose(1, 2, 0)[:, :, ::-1]).astype(np.uint8)  # BGR, as OpenCV writes
        rec.write(mx.recordio.pack_img(mx.recordio.IRHeader(0, float(label), i, 0), hwc, img_fmt=".png"))
    rec.close()


def run(cmd: list[str], cwd: str, env=None) -> str:
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    if done.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done.stdout + done.stderr


def accuracy(log: str) -> float:
    found = re.findall(r"\('accuracy', ([0-9.]+)\)", log)
    if not found:
        raise RuntimeError(f"no accuracy in the output:\n{log[-2000:]}")
    return float(found[0])


def side(python: list[str], cwd: str, calib_mode: str, env=None) -> dict:
    shape = ",".join(map(str, IMAGE))
    t0 = time.perf_counter()
    run(python + ["imagenet_gen_qsym_mkldnn.py", "--model", MODEL, "--calib-mode", calib_mode,
                  "--calib-dataset", "data/calib.rec", "--image-shape", shape, "--batch-size", str(BATCH),
                  "--num-calib-batches", "4", "--data-nthreads", "1"], cwd, env)
    gen_s = time.perf_counter() - t0
    suffix = f"-quantized-4batches-{calib_mode}" if calib_mode != "none" else "-quantized"
    common = ["imagenet_inference.py", "--ctx", "cpu", "--dataset", "data/val.rec", "--image-shape", shape,
              "--batch-size", str(BATCH), "--num-inference-batches", str(N_VAL // BATCH), "--data-nthreads", "1",
              "--rgb-mean", ",".join(map(str, RGB_MEAN)), "--rgb-std", ",".join(map(str, RGB_STD))]
    fp32 = accuracy(run(python + common + ["--symbol-file", f"model/{MODEL}-symbol.json",
                                           "--param-file", f"model/{MODEL}-0000.params"], cwd, env))
    int8 = accuracy(run(python + common + ["--symbol-file", f"model/{MODEL}{suffix}-symbol.json",
                                           "--param-file", f"model/{MODEL}-quantized-0000.params"], cwd, env))
    with open(os.path.join(cwd, "model", f"{MODEL}{suffix}-symbol.json")) as f:
        ops = sorted({n["op"] for n in json.load(f)["nodes"] if n["op"] != "null"})
    return {"fp32_accuracy": fp32, "int8_accuracy": int8, "quantize_seconds": round(gen_s, 2), "int8_ops": ops}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mxnet-python", default="/work/venvs/mx191/bin/python")
    ap.add_argument("--git-dir", default="/work/.mirror/apache+mxnet/repo")
    ap.add_argument("--tag", default="1.9.1")
    ap.add_argument("--calib-modes", default="naive,entropy")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    sys.path.insert(0, REPO)
    work = args.workdir or tempfile.mkdtemp(prefix="mxq-example-")
    sides = {"mxnet": [args.mxnet_python], "mxasync": [sys.executable, "-m", "mxasync", "run"]}
    env = {**os.environ, "PYTHONPATH": REPO + os.pathsep + os.environ.get("PYTHONPATH", "")}
    x, y = digits_images()
    for name in sides:
        d = os.path.join(work, name)
        for sub in ("model", "data", "standin"):
            os.makedirs(os.path.join(d, sub), exist_ok=True)
        export_scripts(args.git_dir, args.tag, d)
    base = os.path.join(work, "mxasync")
    train_stand_in(os.path.join(base, "standin"), x[N_VAL:], y[N_VAL:], args.epochs)
    write_rec(os.path.join(base, "data", "calib.rec"), x[N_VAL:N_VAL + 4 * BATCH], y[N_VAL:N_VAL + 4 * BATCH])
    write_rec(os.path.join(base, "data", "val.rec"), x[:N_VAL], y[:N_VAL])
    for sub in ("standin", "data"):  # the same files for both frameworks
        for f in os.listdir(os.path.join(base, sub)):
            with open(os.path.join(base, sub, f), "rb") as src, open(os.path.join(work, "mxnet", sub, f), "wb") as dst:
                dst.write(src.read())
    result = {"workdir": work, "image_shape": IMAGE, "val_images": N_VAL, "calib_images": 4 * BATCH}
    for mode in args.calib_modes.split(","):
        result[mode] = {name: side(py, os.path.join(work, name), mode, env) for name, py in sides.items()}
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
