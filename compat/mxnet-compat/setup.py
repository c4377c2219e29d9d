"""Ships ``mxnet_compat.pth`` next to the module: the interpreter runs it at start-up (site.py).

The build happens in a temporary folder, so ``pip install ./compat/mxnet-compat`` leaves no
``build/`` or ``*.egg-info`` folder in the clone.
"""

import os
import tempfile

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithPth(build_py):
    def run(self):
        super().run()
        self.copy_file("mxnet_compat.pth", os.path.join(self.build_lib, "mxnet_compat.pth"))


_scratch = tempfile.mkdtemp(prefix="mxnet-compat-build-")
setup(cmdclass={"build_py": BuildWithPth},
      options={"build": {"build_base": os.path.join(_scratch, "build")}, "egg_info": {"egg_base": _scratch}})
