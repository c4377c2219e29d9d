"""GluonCV zoo models on mxasync against MXNet 1.9.1 itself, same weights, same input (manual; CI never runs it).

Two steps, two interpreters (see docs/porting.md)::

    # 1. with the real MXNet 1.9.1 and GluonCV 0.10.5: build, initialize (seeded), run, save
    /work/venvs/mx191/bin/python compat/gluoncv_vs_mxnet.py ref /tmp/gcv-ref [model ...]
    # 2. with mxasync under the mxnet alias and GluonCV: build, load_parameters, run, compare
    mxasync run compat/gluoncv_vs_mxnet.py check /tmp/gcv-ref [model ...]

Step 1 writes, per model, ``NAME.params`` (``save_parameters``), ``NAME.npz`` (the input and every
output) and a JSON line; BatchNorm's gamma, beta and running statistics are set to random values
first (running variances in 0.5..1.5), so that inference really uses them.  Step 2 prints one JSON line per model: whether every output matches
(same shapes and largest error under 1e-3 of the output's largest magnitude), the largest
absolute and relative error, or the error raised with the file and line; for detection models also
``pre_rel``, the relative error of the input of their first ``box_nms`` or ``topk`` (post-processing
that can list near-equal scores in another order).  Models are built with
``pretrained=False`` and, where the constructor accepts it, ``pretrained_base=False``; the ones
that cannot build offline say so in step 1.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import traceback
import warnings

CLS = [
    "resnet18_v1", "resnet50_v1", "resnet18_v2", "resnet50_v2", "resnet50_v1b", "resnet50_v1d",
    "resnext50_32x4d", "se_resnet18_v1", "se_resnext50_32x4d", "resnest50",
    "mobilenet1.0", "mobilenet0.25", "mobilenetv2_1.0", "mobilenetv3_large", "mobilenetv3_small",
    "vgg11", "vgg16_bn", "alexnet", "densenet121", "squeezenet1.0", "squeezenet1.1",
    "googlenet", "darknet53", "hrnet_w18_small_v1_c",
]
CLS_299 = ["inceptionv3", "xception"]
CIFAR = ["cifar_resnet20_v1", "cifar_resnet20_v2", "cifar_wideresnet16_10", "cifar_resnext29_16x64d"]
DET = {
    "ssd_300_vgg16_atrous_voc": 300, "ssd_512_resnet50_v1_voc": 512, "ssd_512_mobilenet1.0_voc": 512,
    "yolo3_darknet53_voc": 320, "yolo3_mobilenet1.0_voc": 320,
    "faster_rcnn_resnet50_v1b_voc": 320, "center_net_resnet18_v1b_voc": 256,
    "center_net_mobilenetv3_small_duc_voc": 256,
}
SEG = {"fcn_resnet50_voc": 256, "psp_resnet50_ade": 480, "deeplab_resnet50_ade": 256,
       "icnet_resnet50_citys": 256, "fastscnn_citys": 256, "danet_resnet50_citys": 256}
# these SSDs' extra layers hand every parameter (BatchNorm's gamma and statistics too) to the global
# initializer as a weight, which Xavier refuses for vectors: they get MXNet's default, Uniform(0.07)
DEFAULT_INIT = {"ssd_512_resnet50_v1_voc", "ssd_512_mobilenet1.0_voc"}
POSE = ["simple_pose_resnet18_v1b", "simple_pose_resnet50_v1b", "mobile_pose_mobilenetv3_small"]


def input_shape(name: str) -> tuple[int, ...]:
    if name in CIFAR:
        return (1, 3, 32, 32)
    if name in CLS_299:
        return (1, 3, 299, 299)
    if name in DET:
        return (1, 3, DET[name], DET[name])
    if name in SEG:
        return (1, 3, SEG[name], SEG[name])
    if name in POSE:
        return (1, 3, 256, 192)
    return (1, 3, 224, 224)


MODELS = CLS + CLS_299 + CIFAR + list(DET) + list(SEG) + POSE


def _error(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    where = f"{frames[-1].filename.split('site-packages/')[-1]}:{frames[-1].lineno}" if frames else ""
    return f"{type(exc).__name__}: {str(exc)[:300]} @ {where}"


def _build(name: str):
    from gluoncv import model_zoo

    kwargs = {"pretrained": False}
    if name not in CLS + CLS_299 + CIFAR:
        kwargs["pretrained_base"] = False
    if name in SEG:
        kwargs["crop_size"] = SEG[name]
        kwargs["base_size"] = SEG[name]
    while True:
        try:
            return model_zoo.get_model(name, **kwargs)
        except TypeError as exc:
            drop = [k for k in ("crop_size", "base_size", "pretrained_base") if k in kwargs and k in str(exc)]
            if not drop:
                raise
            for k in drop:
                kwargs.pop(k)


def _flat(out) -> list:
    if isinstance(out, (list, tuple)):
        return [a for item in out for a in _flat(item)]
    return [out.asnumpy()]


def _run(net, x):
    """The outputs, and the input of the first ``contrib.box_nms`` or ``topk`` (detection post-processing)
    or None: wrapped for this call only, so that a mismatch can be told apart from a different order
    among (near-)equal scores."""
    import mxnet as mx

    seen = []
    originals = {(mx.nd.contrib, "box_nms"): mx.nd.contrib.box_nms, (mx.nd, "topk"): mx.nd.topk}

    def _spy(fn):
        def run(data, *args, **kwargs):
            if not seen:
                seen.append(data.asnumpy())
            return fn(data, *args, **kwargs)
        return run

    for (where, attr), fn in originals.items():
        setattr(where, attr, _spy(fn))
    try:
        with mx.autograd.predict_mode():
            return _flat(net(x)), (seen[0] if seen else None)
    finally:
        for (where, attr), fn in originals.items():
            setattr(where, attr, fn)


def ref(folder: str, name: str) -> dict:
    import mxnet as mx
    import numpy as np

    row = {"model": name}
    net = _build(name)
    mx.random.seed(0)
    net.initialize(mx.init.Uniform() if name in DEFAULT_INIT else mx.init.Xavier(magnitude=2.0))
    rng = np.random.default_rng(0)
    x = mx.nd.array(rng.uniform(-1, 1, input_shape(name)).astype(np.float32))
    _run(net, x)  # finishes deferred initialization
    for pname, p in net.collect_params().items():  # Gluon's BatchNorm says running_, symbols' moving_
        if pname.endswith(("running_mean", "moving_mean", "_beta")):
            p.set_data(mx.nd.array(rng.uniform(-0.1, 0.1, p.shape)))
        elif pname.endswith(("running_var", "moving_var", "_gamma")):
            p.set_data(mx.nd.array(rng.uniform(0.5, 1.5, p.shape)))
    outs, pre = _run(net, x)
    net.save_parameters(os.path.join(folder, name + ".params"))
    extra = {} if pre is None else {"pre": pre}
    np.savez(os.path.join(folder, name + ".npz"), *outs, x=x.asnumpy(), **extra)
    row["outputs"] = [list(o.shape) for o in outs]
    return row


def check(folder: str, name: str) -> dict:
    import mxnet as mx
    import numpy as np

    for alias, kind in (("float", float), ("int", int), ("bool", bool)):
        if not hasattr(np, alias):  # GluonCV's own code (Faster R-CNN) spells NumPy 1's removed aliases
            setattr(np, alias, kind)
    row = {"model": name}
    data = np.load(os.path.join(folder, name + ".npz"))
    want = [data[f"arr_{i}"] for i in range(sum(k.startswith("arr_") for k in data.files))]
    net = _build(name)
    net.load_parameters(os.path.join(folder, name + ".params"))
    got, pre = _run(net, mx.nd.array(data["x"]))
    if "pre" in data.files and pre is not None and pre.shape == data["pre"].shape:
        row["pre_rel"] = float(np.abs(pre.astype(np.float64) - data["pre"]).max() / (np.abs(data["pre"]).max() + 1e-6))
    if [g.shape for g in got] != [w.shape for w in want]:
        row["match"] = False
        row["error"] = f"shapes {[g.shape for g in got]} vs MXNet {[w.shape for w in want]}"
        return row
    abs_err = rel_err = 0.0
    for g, w in zip(got, want, strict=True):
        diff = float(np.abs(g.astype(np.float64) - w).max()) if w.size else 0.0
        abs_err = max(abs_err, diff)
        rel_err = max(rel_err, diff / (float(np.abs(w).max()) + 1e-6) if w.size else 0.0)
    row.update(match=rel_err <= 1e-3, max_abs=abs_err, max_rel=rel_err)
    return row


def main(argv: list[str]) -> None:
    if len(argv) < 2 or argv[0] not in ("ref", "check"):
        sys.exit(__doc__)
    warnings.simplefilter("ignore")
    import mxnet as mx

    real = not hasattr(mx, "mxnet_alias")
    if (argv[0] == "ref") != real:
        sys.exit(f"'{argv[0]}' needs {'the real MXNet' if argv[0] == 'ref' else 'mxasync'}; "
                 f"import mxnet gives {mx.__file__}")
    folder, names = argv[1], argv[2:] or MODELS
    os.makedirs(folder, exist_ok=True)
    step = ref if argv[0] == "ref" else check

    def _timeout(*_):
        raise TimeoutError("more than 300 s")

    signal.signal(signal.SIGALRM, _timeout)
    for name in names:
        start = time.time()
        signal.alarm(300)
        try:
            row = step(folder, name)
        except Exception as exc:  # noqa: BLE001 - the report is the point
            row = {"model": name, "match": False, "error": _error(exc)}
        finally:
            signal.alarm(0)
        row["s"] = round(time.time() - start, 1)
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
