"""MLP and LeNet training steps: Module (symbolic) and hybridized Gluon; PyTorch's one way for both.

One step = forward, backward, SGD (lr 0.05, momentum 0.9, weight decay 1e-4 on weights only) on a
fixed random batch, then a wait for the updated weights.
"""

from __future__ import annotations

import numpy as np

from .common import LR, MOMENTUM, WD, Bench

SHAPES = {"mlp": ((128, 784), 128), "lenet": ((64, 1, 28, 28), 64)}


def _batch(net: str):
    shape, batch = SHAPES[net]
    rng = np.random.default_rng(0)
    return rng.standard_normal(shape).astype(np.float32), rng.integers(0, 10, batch).astype(np.float32)


# -- the MXNet API (mxasync and MXNet 1.9.1) ------------------------------------------------------
def _symbol(mx, net: str):
    s = mx.sym
    if net == "mlp":
        h = s.Variable("data")
        for i in (1, 2):
            h = s.Activation(s.FullyConnected(h, num_hidden=512, name=f"fc{i}"), act_type="relu")
        return s.SoftmaxOutput(s.FullyConnected(h, num_hidden=10, name="fc3"), name="softmax")
    h = s.Convolution(s.Variable("data"), kernel=(5, 5), num_filter=20, name="conv1")
    h = s.Pooling(s.Activation(h, act_type="relu"), kernel=(2, 2), stride=(2, 2), pool_type="max")
    h = s.Convolution(h, kernel=(5, 5), num_filter=50, name="conv2")
    h = s.Pooling(s.Activation(h, act_type="relu"), kernel=(2, 2), stride=(2, 2), pool_type="max")
    h = s.FullyConnected(s.Flatten(h), num_hidden=500, name="fc1")
    h = s.FullyConnected(s.Activation(h, act_type="relu"), num_hidden=10, name="fc2")
    return s.SoftmaxOutput(h, name="softmax")


def _module(mx, net: str) -> Bench:
    x, y = _batch(net)
    mod = mx.mod.Module(_symbol(mx, net), context=mx.cpu())
    mod.bind(data_shapes=[("data", x.shape)], label_shapes=[("softmax_label", y.shape)])
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": LR, "momentum": MOMENTUM, "wd": WD})
    batch = mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)])

    def step():
        mod.forward_backward(batch)
        mod.update()
        mx.nd.waitall()

    return Bench(step)


def _gluon_net(mx, net: str):
    nn = mx.gluon.nn
    model = nn.HybridSequential()
    if net == "mlp":
        model.add(nn.Dense(512, activation="relu"), nn.Dense(512, activation="relu"), nn.Dense(10))
    else:
        model.add(nn.Conv2D(20, 5, activation="relu"), nn.MaxPool2D(2, 2), nn.Conv2D(50, 5, activation="relu"),
                  nn.MaxPool2D(2, 2), nn.Flatten(), nn.Dense(500, activation="relu"), nn.Dense(10))
    return model


def gluon_trainer(mx, model, batch_size: int, wd_on_bias: bool = False):
    """Initialize a Gluon net (Xavier), hybridize it, and return a synchronised SGD step on (x, y)."""
    model.initialize(mx.init.Xavier(), ctx=mx.cpu())
    model.hybridize()
    if not wd_on_bias:
        model.collect_params(".*bias").setattr("wd_mult", 0.0)
    trainer = mx.gluon.Trainer(model.collect_params(), "sgd",
                               {"learning_rate": LR, "momentum": MOMENTUM, "wd": WD})
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()

    def make_step(x, y):
        def step():
            with mx.autograd.record():
                loss = loss_fn(model(x), y)
            loss.backward()
            trainer.step(batch_size)
            mx.nd.waitall()

        return step

    return make_step


def build_mx(mx, name: str, cfg: dict) -> Bench:
    net, api = name.split("_")
    if api == "module":
        return _module(mx, net)
    x, y = _batch(net)
    return Bench(gluon_trainer(mx, _gluon_net(mx, net), len(y))(mx.nd.array(x), mx.nd.array(y)))


# -- PyTorch --------------------------------------------------------------------------------------
def torch_sgd_step(torch, model, x, y, decay_all: bool = False):
    """SGD with momentum, weight decay on weights only (or on all), mean cross-entropy: one step."""
    decays = {n: decay_all or not n.endswith("bias") for n, _ in model.named_parameters()}
    decay = [p for n, p in model.named_parameters() if decays[n]]
    rest = [p for n, p in model.named_parameters() if not decays[n]]
    opt = torch.optim.SGD([{"params": decay, "weight_decay": WD}, {"params": rest, "weight_decay": 0.0}],
                          lr=LR, momentum=MOMENTUM)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        loss_fn(model(x), y).backward()
        opt.step()

    return step


def build_torch(torch, name: str, cfg: dict) -> Bench:
    nn = torch.nn
    net = name.split("_")[0]
    torch.manual_seed(0)
    if net == "mlp":
        model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
    else:
        model = nn.Sequential(nn.Conv2d(1, 20, 5), nn.ReLU(), nn.MaxPool2d(2, 2), nn.Conv2d(20, 50, 5), nn.ReLU(),
                              nn.MaxPool2d(2, 2), nn.Flatten(), nn.Linear(800, 500), nn.ReLU(), nn.Linear(500, 10))
    x, y = _batch(net)
    return Bench(torch_sgd_step(torch, model, torch.from_numpy(x), torch.from_numpy(y).long()))
