"""Vision networks with MXNet 1.9.1's structure and parameter names: ``get_model(name, **kwargs)``.

>>> from mxasync.gluon.model_zoo import vision
>>> net = vision.get_model("resnet18_v1", classes=10)
>>> type(net).__name__
'ResNetV1'
"""

from .alexnet import *  # noqa: F403
from .alexnet import __all__ as _alexnet
from .densenet import *  # noqa: F403
from .densenet import __all__ as _densenet
from .inception import *  # noqa: F403
from .inception import __all__ as _inception
from .mobilenet import *  # noqa: F403
from .mobilenet import __all__ as _mobilenet
from .resnet import *  # noqa: F403
from .resnet import __all__ as _resnet
from .squeezenet import *  # noqa: F403
from .squeezenet import __all__ as _squeezenet
from .vgg import *  # noqa: F403
from .vgg import __all__ as _vgg

__all__ = ["get_model", *_alexnet, *_densenet, *_inception, *_mobilenet, *_resnet, *_squeezenet, *_vgg]

_MODELS = {
    **{f"resnet{n}_v{v}": globals()[f"resnet{n}_v{v}"] for v in (1, 2) for n in (18, 34, 50, 101, 152)},
    **{f"vgg{n}{bn}": globals()[f"vgg{n}{bn}"] for bn in ("", "_bn") for n in (11, 13, 16, 19)},
    "alexnet": alexnet,  # noqa: F405
    **{f"densenet{n}": globals()[f"densenet{n}"] for n in (121, 161, 169, 201)},
    "squeezenet1.0": squeezenet1_0,  # noqa: F405
    "squeezenet1.1": squeezenet1_1,  # noqa: F405
    "inceptionv3": inception_v3,  # noqa: F405
    "mobilenet1.0": mobilenet1_0,  # noqa: F405
    "mobilenet0.75": mobilenet0_75,  # noqa: F405
    "mobilenet0.5": mobilenet0_5,  # noqa: F405
    "mobilenet0.25": mobilenet0_25,  # noqa: F405
    "mobilenetv2_1.0": mobilenet_v2_1_0,  # noqa: F405
    "mobilenetv2_0.75": mobilenet_v2_0_75,  # noqa: F405
    "mobilenetv2_0.5": mobilenet_v2_0_5,  # noqa: F405
    "mobilenetv2_0.25": mobilenet_v2_0_25,  # noqa: F405
}


def get_model(name, **kwargs):
    """The network ``name`` (e.g. ``'resnet18_v1'``, ``'mobilenet0.25'``); keyword arguments go to its
    constructor (``classes``, ``pretrained``, ``ctx``, ``root``, ...)."""
    name = name.lower()
    if name not in _MODELS:
        options = "\n\t".join(sorted(_MODELS))
        raise ValueError(f"Model {name} is not supported. Available options are\n\t{options}")
    return _MODELS[name](**kwargs)
