"""Output (loss) layers and gradient-control ops: SoftmaxOutput, *RegressionOutput, SVMOutput, MakeLoss, BlockGrad."""

from . import output, softmax_cross_entropy, svm_output  # noqa: F401
