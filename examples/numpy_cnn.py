"""A CNN written in MXNet's NumPy-interface style (d2l's LeNet chapter, scaled down), on the bundled digits.

The same script runs on MXNet 1.9.1 (``--framework mxnet`` with MXNet's interpreter), from the
same initial weights, so the two accuracies can be compared:

    python examples/numpy_cnn.py                                   # mxasync
    /work/venvs/mx191/bin/python examples/numpy_cnn.py --framework mxnet

The net: a 3x3 convolution (8 filters, pad 1), relu, 2x2 max pooling, a dense layer to 10
classes; on the 8x8 digits. Data, start and training loop are numpy_mlp.py's.
"""

from __future__ import annotations

from numpy_mlp import arguments, fit, load, start


def main() -> None:
    args = arguments(__doc__, filters=8)
    f = args.filters
    mx, params = start(args, [(f, 1, 3, 3), (f,), (f * 16, 10), (10,)])
    np, npx = mx.np, mx.npx

    def net(x):
        w1, b1, w2, b2 = params
        h = npx.relu(npx.convolution(x, w1, b1, kernel=(3, 3), pad=(1, 1), num_filter=f))
        h = npx.pooling(h, kernel=(2, 2), stride=(2, 2), pool_type="max")
        return np.dot(h.reshape(h.shape[0], -1), w2) + b2

    fit(mx, args, params, net, load(sample_shape=(1, 8, 8)))


if __name__ == "__main__":
    main()
