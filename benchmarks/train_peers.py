"""The training step of benchmarks/train.py in MXNet 1.9.1 or PyTorch; prints JSON images/s.

Run by ``benchmarks/train.py`` under another Python (``--mxnet`` / ``--torch``), once per round:
``python train_peers.py mxnet|torch --steps 30``.  Same networks and step as train.py: forward,
backward and SGD (lr 0.05, momentum 0.9, weight decay 1e-4 on weights only, gradients
rescaled by 1/batch), synthetic data, the step timed with a wait on the weights each step.
Nothing of mxasync is imported: the peer's own Python may not have it.
"""

from __future__ import annotations

import json
import sys
import time

LR, MOMENTUM, WD = 0.05, 0.9, 1e-4
NETS = {"mlp": ((128, 784), 128), "lenet": ((64, 1, 28, 28), 64)}


CPU_MS: dict = {}  # net -> CPU milliseconds per step (every thread of the process), filled by _time


def _time(step, steps: int, name: str) -> float:
    """Wall seconds per step; the process's CPU time per step goes to ``CPU_MS[name]``."""
    step()
    step()
    c0, t0 = time.process_time(), time.perf_counter()
    for _ in range(steps):
        step()
    wall = (time.perf_counter() - t0) / steps
    CPU_MS[name] = round((time.process_time() - c0) / steps * 1e3, 3)
    return wall


def mxnet_steps(steps: int) -> dict:
    import mxnet as mx

    def mlp():
        h = mx.sym.Variable("data")
        for i, n in enumerate((512, 512), start=1):
            h = mx.sym.Activation(mx.sym.FullyConnected(h, num_hidden=n, name=f"fc{i}"), act_type="relu")
        return mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=10, name="fc3"), name="softmax")

    def lenet():
        s = mx.sym
        h = s.Convolution(s.Variable("data"), kernel=(5, 5), num_filter=20, name="conv1")
        h = s.Pooling(s.Activation(h, act_type="relu"), kernel=(2, 2), stride=(2, 2), pool_type="max")
        h = s.Convolution(h, kernel=(5, 5), num_filter=50, name="conv2")
        h = s.Pooling(s.Activation(h, act_type="relu"), kernel=(2, 2), stride=(2, 2), pool_type="max")
        h = s.FullyConnected(s.Flatten(h), num_hidden=500, name="fc1")
        h = s.FullyConnected(s.Activation(h, act_type="relu"), num_hidden=10, name="fc2")
        return s.SoftmaxOutput(h, name="softmax")

    out = {name: _mxnet_one(mx, net(), name, steps) for name, net in (("mlp", mlp), ("lenet", lenet))}
    out["cpu_ms"] = dict(CPU_MS)
    return out


def _mxnet_one(mx, sym, name: str, steps: int) -> float:
    import numpy as np  # MXNet's Python has numpy; PyTorch's need not

    shape, batch = NETS[name]
    rng = np.random.default_rng(0)
    mod = mx.mod.Module(sym, context=mx.cpu())
    mod.bind(data_shapes=[("data", shape)], label_shapes=[("softmax_label", (batch,))])
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": LR, "momentum": MOMENTUM, "wd": WD})
    b = mx.io.DataBatch([mx.nd.array(rng.standard_normal(shape))], [mx.nd.array(rng.integers(0, 10, batch))])
    weights = [w for block in mod._exec_group.param_arrays for w in block]

    def step():
        mod.forward_backward(b)
        mod.update()
        for w in weights:
            w.wait_to_read()

    return batch / _time(step, steps, name)


def torch_steps(steps: int) -> dict:
    import torch
    from torch import nn

    def lenet():
        return nn.Sequential(nn.Conv2d(1, 20, 5), nn.ReLU(), nn.MaxPool2d(2, 2), nn.Conv2d(20, 50, 5), nn.ReLU(),
                             nn.MaxPool2d(2, 2), nn.Flatten(), nn.Linear(800, 500), nn.ReLU(), nn.Linear(500, 10))

    def mlp():
        return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))

    out = {name: _torch_one(torch, nn, net(), name, steps) for name, net in (("mlp", mlp), ("lenet", lenet))}
    out["threads"] = torch.get_num_threads()
    out["cpu_ms"] = dict(CPU_MS)
    return out


def _torch_one(torch, nn, model, name: str, steps: int) -> float:
    shape, batch = NETS[name]
    torch.manual_seed(0)
    decay = [p for n, p in model.named_parameters() if n.endswith("weight")]
    rest = [p for n, p in model.named_parameters() if not n.endswith("weight")]
    # MXNet's rescale 1/batch is the mean of the loss; momentum and wd as torch's SGD applies them
    opt = torch.optim.SGD([{"params": decay, "weight_decay": WD}, {"params": rest, "weight_decay": 0.0}],
                          lr=LR, momentum=MOMENTUM)
    x = torch.randn(*shape)
    y = torch.randint(0, 10, (batch,))
    loss_fn = nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        loss_fn(model(x), y).backward()
        opt.step()

    return batch / _time(step, steps, name)


def main() -> None:
    which = sys.argv[1]
    steps = int(sys.argv[sys.argv.index("--steps") + 1]) if "--steps" in sys.argv else 30
    res = mxnet_steps(steps) if which == "mxnet" else torch_steps(steps)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
