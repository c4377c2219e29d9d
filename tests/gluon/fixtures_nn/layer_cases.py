"""The layer cases recorded from MXNet 1.9.1 (shared by ``make_fixtures.py`` and ``test_nn_layers.py``).

Each case: the constructor expression evaluated with ``nn`` bound to the framework's ``gluon.nn``, the input
shape, and the input kind ("normal", or "index:<n>" for integer indices below n).
"""

CASES = [
    ("nn.Dense(3)", (2, 3, 2), "normal"),
    ("nn.Dense(4, activation='tanh', flatten=False)", (2, 3, 5), "normal"),
    ("nn.Dense(2, use_bias=False, in_units=6)", (3, 6), "normal"),
    ("nn.Dropout(0.5)", (2, 4), "normal"),
    ("nn.BatchNorm()", (4, 3, 2, 2), "normal"),
    ("nn.BatchNorm(axis=-1, momentum=0.5, epsilon=1e-3)", (5, 2, 3), "normal"),
    ("nn.BatchNorm(scale=False, center=False)", (4, 3, 2), "normal"),
    ("nn.InstanceNorm()", (2, 3, 4), "normal"),
    ("nn.InstanceNorm(scale=True, epsilon=1e-3)", (2, 3, 2, 2), "normal"),
    ("nn.LayerNorm()", (2, 3, 5), "normal"),
    ("nn.LayerNorm(axis=1, center=False)", (2, 3, 4), "normal"),
    ("nn.GroupNorm(num_groups=2)", (2, 4, 3), "normal"),
    ("nn.Embedding(10, 3)", (2, 4), "index:10"),
    ("nn.Flatten()", (2, 3, 2, 2), "normal"),
    ("nn.Activation('relu')", (3, 4), "normal"),
    ("nn.Activation('sigmoid')", (3, 4), "normal"),
    ("nn.Activation('tanh')", (3, 4), "normal"),
    ("nn.Activation('softrelu')", (3, 4), "normal"),
    ("nn.Activation('softsign')", (3, 4), "normal"),
    ("nn.LeakyReLU(0.1)", (3, 4), "normal"),
    ("nn.PReLU()", (2, 3, 4), "normal"),
    ("nn.PReLU(in_channels=3)", (2, 3, 4), "normal"),
    ("nn.ELU()", (3, 4), "normal"),
    ("nn.ELU(alpha=0.5)", (3, 4), "normal"),
    ("nn.SELU()", (3, 4), "normal"),
    ("nn.GELU()", (3, 4), "normal"),
    ("nn.Swish()", (3, 4), "normal"),
    ("nn.Swish(beta=2.0)", (3, 4), "normal"),
    ("nn.Conv1D(4, 3)", (2, 3, 7), "normal"),
    ("nn.Conv1D(4, 3, strides=2, padding=1, activation='relu')", (2, 2, 9), "normal"),
    ("nn.Conv2D(3, 3, strides=2, padding=2, dilation=2)", (1, 2, 7, 7), "normal"),
    ("nn.Conv2D(4, 3, padding=1)", (2, 3, 5, 5), "normal"),
    ("nn.Conv2D(6, (3, 2), strides=(2, 1), groups=3, use_bias=False)", (1, 3, 6, 5), "normal"),
    ("nn.Conv3D(2, 2, padding=(1, 0, 0))", (1, 2, 3, 3, 3), "normal"),
    ("nn.Conv1DTranspose(3, 3, strides=2, output_padding=1)", (2, 2, 4), "normal"),
    ("nn.Conv2DTranspose(4, 3, strides=2, padding=1, output_padding=1)", (1, 2, 3, 3), "normal"),
    ("nn.Conv2DTranspose(4, 3, groups=2, in_channels=4)", (1, 4, 3, 3), "normal"),
    ("nn.MaxPool1D()", (2, 3, 6), "normal"),
    ("nn.MaxPool2D(3, 2, 1)", (2, 2, 5, 5), "normal"),
    ("nn.MaxPool2D(ceil_mode=True)", (1, 2, 5, 5), "normal"),
    ("nn.MaxPool2D(layout='NHWC')", (1, 4, 4, 3), "normal"),
    ("nn.MaxPool3D()", (1, 2, 4, 4, 4), "normal"),
    ("nn.AvgPool1D(3, 1, 1)", (2, 3, 6), "normal"),
    ("nn.AvgPool2D(3, 2, 1, count_include_pad=False)", (2, 2, 5, 5), "normal"),
    ("nn.AvgPool2D(ceil_mode=True)", (1, 2, 5, 5), "normal"),
    ("nn.AvgPool3D()", (1, 2, 4, 4, 4), "normal"),
    ("nn.GlobalMaxPool1D()", (2, 3, 5), "normal"),
    ("nn.GlobalMaxPool2D()", (2, 3, 4, 5), "normal"),
    ("nn.GlobalAvgPool1D()", (2, 3, 5), "normal"),
    ("nn.GlobalAvgPool2D()", (2, 3, 4, 5), "normal"),
    ("nn.GlobalAvgPool3D()", (1, 2, 3, 3, 3), "normal"),
    ("nn.ReflectionPad2D(1)", (1, 2, 3, 3), "normal"),
    ("nn.ReflectionPad2D((0, 0, 0, 0, 1, 2, 2, 1))", (1, 1, 4, 4), "normal"),
]


def build(expr: str, nn):
    """The layer of ``expr`` with the fixed prefix ``layer_`` (so parameter names do not depend on counters)."""
    return eval(expr[:-1] + ("" if expr.endswith("()") else ", ") + "prefix='layer_')", {"nn": nn})
