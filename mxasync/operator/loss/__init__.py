"""Output (loss) layers and gradient-control ops: SoftmaxOutput, *RegressionOutput, SVMOutput, MakeLoss, BlockGrad."""

from . import output, svm_output  # noqa: F401
