"""The toy device's operator overrides, written to the plugin contract (version 1).

* forward: ``fwd(xp, params, *inputs)`` returns the output; a kernel that names an
  ``out`` parameter also gets the array the result goes to (or None);
* backward: ``bwd(xp, params, out_grads, inputs, outputs)`` returns one gradient per
  input; only what the op keeps is given (``override_signature('relu')['keeps']``:
  relu keeps its output, so ``inputs`` is ``[None]``);
* ``NotImplemented`` hands a case back to the generic kernel.
"""

from __future__ import annotations


def _count(name: str) -> None:
    from . import count

    count(name)


def relu(xp, params, x):
    _count("relu")
    return xp.maximum(x, 0)


def relu_backward(xp, params, out_grads, inputs, outputs):
    _count("relu.backward")
    (y,) = outputs  # relu keeps its output, not its input
    return [out_grads[0] * (y > 0)]


def fully_connected(xp, params, data, weight, bias=None):
    _count("FullyConnected")
    x = data.reshape(data.shape[0], -1) if params.flatten else data
    y = x @ weight.T
    return y if bias is None else y + bias


def fully_connected_backward(xp, params, out_grads, inputs, outputs):
    _count("FullyConnected.backward")
    og = out_grads[0]
    data, weight = inputs[0], inputs[1]
    x = data.reshape(data.shape[0], -1) if params.flatten else data
    og2 = og.reshape(-1, og.shape[-1])
    grads = [(og @ weight).reshape(data.shape), og2.T @ x.reshape(-1, x.shape[-1])]
    if len(inputs) == 3:
        grads.append(og2.sum(axis=0))
    return grads


def activation(xp, params, data, out=None):
    """Writes into ``out`` when given (the op offers its output array), else returns a new one."""
    if params.act_type != "tanh":
        return NotImplemented  # the generic kernel runs the other activations
    _count("Activation")
    return xp.tanh(data, out=out) if out is not None else xp.tanh(data)


def register_kernels(backend) -> None:
    backend.override("relu")(relu)
    backend.override("relu.backward")(relu_backward)
    backend.override("FullyConnected")(fully_connected)
    backend.override("FullyConnected.backward")(fully_connected_backward)
    backend.override("Activation")(activation)
