"""Write MXNet 1.9.1 optimizer .states files for tests/faults/test_states_file.py.

Run with MXNet's interpreter: /work/venvs/mx191/bin/python tests/faults/make_mxnet_states.py
Each file holds the states after two updates of weight ones((3,)) with gradient ones((3,)) * 0.5
(index 0); the .json beside it records the expected numbers.
"""

from __future__ import annotations

import json
import pathlib

import mxnet as mx

OUT = pathlib.Path(__file__).parent / "fixtures"


def main() -> None:
    OUT.mkdir(exist_ok=True)
    expected = {}
    for name, kwargs, dump in [("sgd", {"momentum": 0.9, "lr_scheduler": mx.lr_scheduler.FactorScheduler(10, 0.5)},
                                True),
                               ("adam", {}, False)]:
        opt = mx.optimizer.create(name, learning_rate=0.1, **kwargs)
        updater = mx.optimizer.get_updater(opt)
        weight, grad = mx.nd.ones((3,)), mx.nd.ones((3,)) * 0.5
        for _ in range(2):
            updater(0, grad, weight)
        (OUT / f"mxnet_{name}.states").write_bytes(updater.get_states(dump_optimizer=dump))
        state = updater.states[0]
        state = state if isinstance(state, (tuple, list)) else (state,)
        expected[name] = {"state": [s.asnumpy().tolist() for s in state], "weight": weight.asnumpy().tolist(),
                          "dump_optimizer": dump}
    (OUT / "mxnet_states.json").write_text(json.dumps(expected, indent=1) + "\n")


if __name__ == "__main__":
    main()
