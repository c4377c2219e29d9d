"""Ships ``mxnet_compat.pth`` next to the module: the interpreter runs it at start-up (site.py)."""

import os

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithPth(build_py):
    def run(self):
        super().run()
        self.copy_file("mxnet_compat.pth", os.path.join(self.build_lib, "mxnet_compat.pth"))


setup(cmdclass={"build_py": BuildWithPth})
