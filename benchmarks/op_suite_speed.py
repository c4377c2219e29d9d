"""The operator workloads MXNet 1.9.1's ``test_operator.py`` gives 60 s on 2 cores; prints JSON.

    python benchmarks/op_suite_speed.py [--steps 300] [--only rnn,transpose,broadcast]

Seconds (best of ``--repeat``) through the public API, as the tests run them:

* ``rnn_<mode>_dropout``: ``mx.sym.RNN`` with 5 layers, 800 inputs and hidden units, batch 20,
  ``p=0.5``, ``state_outputs``, one training forward (MXNet's ``test_<mode>_dropout`` at T=300);
  ``rnn_lstm_bidirectional_fwd_bwd``: 2 bidirectional LSTM layers, forward and backward;
* ``transpose_4d_all_perms``: ``mx.nd.transpose`` of a (32, 64, 48, 50) float32 array (4.9M
  elements) in all 24 axis orders; ``transpose_big_uint8``: MXNet's ``test_big_transpose``
  ((1, 140, 280, 280, 10) uint8, there and back);
* ``broadcast_<op>_fwd_bwd``: bind, forward and backward of ``mx.sym.broadcast_<op>`` on the 31
  large shape pairs of MXNet's ``gen_broadcast_data``.

``numpy_*`` entries time the same data movement in plain numpy, in the same run.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import mxasync as mx  # noqa: E402

BROADCAST_SHAPES = [  # MXNet's gen_broadcast_data, its 31 fixed pairs
    ((2, 5, 1, 30, 7), (1, 5, 448, 30, 1)), ((10, 49, 1, 77, 17), (10, 1, 2, 1, 17)),
    ((13, 2, 65, 2, 1), (13, 1, 65, 1, 225)), ((9, 434, 4, 2, 37), (9, 1, 4, 1, 37)),
    ((2, 52, 1, 4, 1), (1, 52, 60, 1, 37)), ((1, 23, 7, 122, 50), (2, 1, 7, 1, 50)),
    ((1, 17, 1, 5, 1), (22, 1, 2, 1, 28)), ((29, 1, 2, 1, 8), (29, 22, 1, 130, 1)),
    ((2, 36, 1, 427, 3), (1, 36, 11, 427, 1)), ((1, 2, 1, 100, 7), (1, 2, 448, 100, 1)),
    ((1, 2, 495, 77, 7), (1, 2, 1, 1, 7)), ((1, 43, 65, 2, 1), (1, 43, 65, 1, 225)),
    ((1, 92, 434, 2, 2), (1, 92, 1, 2, 2)), ((1, 92, 1, 4, 1), (1, 92, 134, 1, 17)),
    ((1, 53, 2, 122, 143), (1, 1, 2, 1, 143)), ((1, 179, 1, 87, 17), (1, 179, 1, 1, 17)),
    ((1, 1, 17, 5, 1), (1, 22, 1, 1, 28)), ((1, 2, 1, 1, 8), (1, 2, 52, 430, 1)),
    ((1, 163, 1, 22, 3), (1, 163, 116, 22, 1)), ((1, 1, 44, 30, 7), (1, 1, 44, 30, 1)),
    ((1, 1, 1, 1, 28), (1, 127, 1, 5, 28)), ((1, 2, 394, 38, 1), (1, 2, 394, 38, 16)),
    ((1, 10, 49, 77, 17), (1, 1, 1, 1, 17)), ((1, 431, 6, 2, 225), (1, 1, 6, 2, 225)),
    ((1, 15, 1, 28, 1), (1, 15, 1, 28, 463)), ((1, 129, 2, 48, 96), (1, 129, 2, 1, 1)),
    ((1, 1, 403, 17, 2), (1, 44, 403, 17, 2)), ((1, 1, 65, 2, 22), (1, 1, 65, 1, 1)),
    ((1, 24, 103, 17, 18), (1, 24, 1, 1, 1)), ((1, 1, 1, 1, 2), (1, 24, 194, 50, 1)),
    ((1, 1, 107, 84, 9), (1, 1, 1, 1, 1)),
]


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return round(min(times), 3)


def rnn_dropout(mode: str, steps: int):
    x, params, state = mx.sym.Variable("x"), mx.sym.Variable("params"), mx.sym.Variable("state")
    cell = dict(state_cell=mx.sym.Variable("state_cell")) if mode == "lstm" else {}
    rnn = mx.sym.RNN(data=x, parameters=params, state=state, state_size=800, num_layers=5, mode=mode, p=0.5,
                     state_outputs=True, **cell)
    exe = rnn.simple_bind(ctx=mx.cpu(), x=(steps, 20, 800))

    def run():
        exe.forward(is_train=True)[0].wait_to_read()

    return run


def rnn_bidirectional(steps: int):
    x, params, state, cell = (mx.sym.Variable(n) for n in ("x", "params", "state", "state_cell"))
    rnn = mx.sym.RNN(data=x, parameters=params, state=state, state_cell=cell, state_size=256, num_layers=2,
                     mode="lstm", p=0.3, bidirectional=True, state_outputs=True)
    exe = rnn.simple_bind(ctx=mx.cpu(), x=(steps, 32, 256))
    for arr in exe.arg_dict.values():
        arr[:] = np.random.uniform(-0.1, 0.1, arr.shape)
    heads = [mx.nd.ones(o.shape) for o in exe.outputs]

    def run():
        exe.forward(is_train=True)
        exe.backward(heads)
        exe.grad_dict["params"].wait_to_read()

    return run


def transpose_perms():
    x = mx.nd.array(np.random.rand(32, 64, 48, 50).astype(np.float32))
    x.wait_to_read()

    def run():
        for axes in itertools.permutations(range(4)):
            mx.nd.transpose(x, axes=axes).wait_to_read()

    xn = x.asnumpy()

    def ref():
        for axes in itertools.permutations(range(4)):
            np.ascontiguousarray(np.transpose(xn, axes))

    return run, ref


def transpose_big():
    x_np = np.random.normal(size=(1, 140, 280, 280, 10)).astype("uint8")

    def run():
        x = mx.nd.array(x_np, dtype="uint8")
        y = mx.nd.transpose(x, axes=(0, 4, 1, 2, 3))
        mx.nd.transpose(y, axes=(0, 2, 3, 4, 1)).wait_to_read()

    def ref():
        y = np.ascontiguousarray(np.transpose(x_np, (0, 4, 1, 2, 3)))
        np.ascontiguousarray(np.transpose(y, (0, 2, 3, 4, 1)))

    return run, ref


def broadcast(op: str):
    rng = np.random.RandomState(0)
    data = [(rng.uniform(0.5, 1.5, lhs).astype(np.float32), rng.uniform(0.5, 1.5, rhs).astype(np.float32))
            for lhs, rhs in BROADCAST_SHAPES]
    sym = getattr(mx.sym, f"broadcast_{op}")(mx.sym.Variable("a"), mx.sym.Variable("b"))

    def run():
        for lhs, rhs in data:
            ga, gb = mx.nd.empty(lhs.shape), mx.nd.empty(rhs.shape)
            exe = sym.bind(mx.cpu(), args={"a": mx.nd.array(lhs), "b": mx.nd.array(rhs)}, args_grad=[ga, gb])
            exe.forward(is_train=True)
            exe.backward([mx.nd.ones(exe.outputs[0].shape)])
            ga.wait_to_read()
            gb.wait_to_read()

    return run


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=300, help="sequence length of the RNN workloads (MXNet's: 300)")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--only", default="rnn,transpose,broadcast")
    args = ap.parse_args()
    only = set(args.only.split(","))
    out: dict = {"host": platform.node(), "cpus": os.cpu_count(), "load": os.getloadavg()[0],
                 "mxasync": os.path.dirname(mx.__file__), "steps": args.steps, "seconds": {}}
    res = out["seconds"]
    if "rnn" in only:
        for mode in ("lstm", "gru", "rnn_tanh", "rnn_relu"):
            res[f"rnn_{mode}_dropout"] = best(rnn_dropout(mode, args.steps), 1)
        res["rnn_lstm_bidirectional_fwd_bwd"] = best(rnn_bidirectional(min(args.steps, 100)), args.repeat)
    if "transpose" in only:
        run, ref = transpose_perms()
        res["transpose_4d_all_perms"], res["numpy_transpose_4d_all_perms"] = best(run, args.repeat), best(ref, args.repeat)
        run, ref = transpose_big()
        res["transpose_big_uint8"], res["numpy_transpose_big_uint8"] = best(run, args.repeat), best(ref, args.repeat)
    if "broadcast" in only:
        for op in ("add", "mul", "div", "power", "maximum", "hypot"):
            res[f"broadcast_{op}_fwd_bwd"] = best(broadcast(op), args.repeat)
    out["load_after"] = os.getloadavg()[0]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
