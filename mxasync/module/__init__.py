"""``mx.mod`` / ``mx.module``: Module, the training loop and data-parallel executor groups."""

from . import python_module, sequential_module
from .base_module import BaseModule
from .bucketing_module import BucketingModule
from .executor_group import DataParallelExecutorGroup
from .module import Module
from .python_module import PythonLossModule, PythonModule
from .sequential_module import SequentialModule

__all__ = ["BaseModule", "Module", "BucketingModule", "DataParallelExecutorGroup", "SequentialModule",
           "PythonModule", "PythonLossModule", "python_module", "sequential_module"]
