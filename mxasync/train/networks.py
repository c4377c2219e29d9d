"""The networks ``mxasync train`` trains: an MLP and a LeNet-style CNN, for 1x28x28 inputs.

Input standardisation is part of the graph (``(data - mean) / std`` with the
training set's statistics), so a saved checkpoint takes raw [0, 1] pixels.

>>> net = lenet(mean=0.2, std=0.3)
>>> net.infer_shape(data=(2, 1, 28, 28))[1]
[(2, 10)]
>>> mlp().list_arguments()[:3]
['data', 'fc1_weight', 'fc1_bias']
"""

from __future__ import annotations

from .. import symbol as sym

__all__ = ["mlp", "lenet", "NETWORKS", "get_network"]


def _standardised(mean: float, std: float):
    data = sym.Variable("data")
    return data if (mean, std) == (0.0, 1.0) else (data - mean) / std


def mlp(num_classes: int = 10, mean: float = 0.0, std: float = 1.0, hidden: tuple[int, ...] = (256, 128)):
    """Flatten -> (FullyConnected -> relu) per ``hidden`` size -> FullyConnected -> SoftmaxOutput."""
    h = sym.Flatten(_standardised(mean, std), name="flatten")
    for i, n in enumerate(hidden, start=1):
        h = sym.Activation(sym.FullyConnected(h, num_hidden=n, name=f"fc{i}"), act_type="relu", name=f"relu{i}")
    h = sym.FullyConnected(h, num_hidden=num_classes, name=f"fc{len(hidden) + 1}")
    return sym.SoftmaxOutput(h, name="softmax")


def lenet(num_classes: int = 10, mean: float = 0.0, std: float = 1.0):
    """LeCun's LeNet as in MXNet's examples (relu, max pooling): conv 20 -> conv 50 -> fc 500 -> fc."""
    h = sym.Convolution(_standardised(mean, std), kernel=(5, 5), num_filter=20, name="conv1")
    h = sym.Pooling(sym.Activation(h, act_type="relu", name="relu1"), kernel=(2, 2), stride=(2, 2),
                    pool_type="max", name="pool1")
    h = sym.Convolution(h, kernel=(5, 5), num_filter=50, name="conv2")
    h = sym.Pooling(sym.Activation(h, act_type="relu", name="relu2"), kernel=(2, 2), stride=(2, 2),
                    pool_type="max", name="pool2")
    h = sym.FullyConnected(sym.Flatten(h, name="flatten"), num_hidden=500, name="fc1")
    h = sym.FullyConnected(sym.Activation(h, act_type="relu", name="relu3"), num_hidden=num_classes, name="fc2")
    return sym.SoftmaxOutput(h, name="softmax")


NETWORKS = {"mlp": mlp, "lenet": lenet}


def get_network(name: str, **kwargs):
    """The symbol of network ``name`` ('mlp' or 'lenet')."""
    if name not in NETWORKS:
        raise ValueError(f"unknown network {name!r}; choose from {sorted(NETWORKS)}")
    return NETWORKS[name](**kwargs)
