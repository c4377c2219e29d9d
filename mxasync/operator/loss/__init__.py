"""Output (loss) layers and gradient-control ops: SoftmaxOutput, *RegressionOutput, MakeLoss, BlockGrad."""

from . import output  # noqa: F401
