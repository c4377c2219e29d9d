"""ResNet-18 v1 training (batch 8; 3x64x64 and 10 classes, or 3x224x224 and 1000 classes) and MobileNet v1
inference (batch 8, 3x128x128).

The MXNet side uses the model zoo's ``resnet18_v1`` and ``mobilenet1_0`` (hybridized); PyTorch's side
is the same architecture written out (torchvision is not needed): ResNet v1 basic blocks, and MobileNet
v1's depthwise-separable blocks with a BatchNorm and ReLU after every convolution.
"""

from __future__ import annotations

import numpy as np

from .common import Bench
from .train_small import gluon_trainer, torch_sgd_step

RESNET = {"resnet18_train": {"batch": 8, "shape": (3, 64, 64), "classes": 10},
          "resnet18_train_224": {"batch": 8, "shape": (3, 224, 224), "classes": 1000}}
MOBILENET = {"batch": 8, "shape": (3, 128, 128), "classes": 1000}
# MobileNet v1 1.0: (output channels, stride) of each depthwise-separable block after the 32-channel stem
MOBILENET_BLOCKS = ((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1), (512, 1), (512, 1),
                    (512, 1), (512, 1), (1024, 2), (1024, 1))


def _inputs(spec: dict):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((spec["batch"],) + spec["shape"]).astype(np.float32)
    return x, rng.integers(0, spec["classes"], spec["batch"]).astype(np.float32)


def build_mx(mx, name: str, cfg: dict) -> Bench:
    vision = mx.gluon.model_zoo.vision
    if name in RESNET:
        spec = RESNET[name]
        x, y = _inputs(spec)
        make_step = gluon_trainer(mx, vision.resnet18_v1(classes=spec["classes"]), spec["batch"], wd_on_bias=True)
        return Bench(make_step(mx.nd.array(x), mx.nd.array(y)))
    x, _ = _inputs(MOBILENET)
    model = vision.mobilenet1_0(classes=MOBILENET["classes"])
    model.initialize(mx.init.Xavier(), ctx=mx.cpu())
    model.hybridize()
    data = mx.nd.array(x)

    def step():
        model(data).wait_to_read()

    return Bench(step)


# -- PyTorch --------------------------------------------------------------------------------------
def _resnet18(torch, classes: int):
    nn = torch.nn

    class Basic(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.body = nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout),
                                      nn.ReLU(), nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout))
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            return torch.relu(self.body(x) + (x if self.down is None else self.down(x)))

    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        layers += [Basic(cin, cout, stride), Basic(cout, cout, 1)]
        cin = cout
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, classes))


def _mobilenet(torch, classes: int):
    nn = torch.nn

    def conv_bn(cin, cout, kernel, stride, groups=1):
        return [nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False),
                nn.BatchNorm2d(cout), nn.ReLU()]

    layers, cin = conv_bn(3, 32, 3, 2), 32
    for cout, stride in MOBILENET_BLOCKS:
        layers += conv_bn(cin, cin, 3, stride, groups=cin) + conv_bn(cin, cout, 1, 1)
        cin = cout
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, classes))


def build_torch(torch, name: str, cfg: dict) -> Bench:
    torch.manual_seed(0)
    if name in RESNET:
        x, y = _inputs(RESNET[name])
        model = _resnet18(torch, RESNET[name]["classes"])
        return Bench(torch_sgd_step(torch, model, torch.from_numpy(x), torch.from_numpy(y).long(), decay_all=True))
    x, _ = _inputs(MOBILENET)
    model = _mobilenet(torch, MOBILENET["classes"]).eval()
    data = torch.from_numpy(x)

    def step():
        with torch.inference_mode():
            model(data)

    return Bench(step)
