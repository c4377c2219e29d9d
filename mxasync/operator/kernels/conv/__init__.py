"""Convolution and deconvolution kernels over ``xp``.

``convolution.py`` and ``deconvolution.py`` are the kernels the ops call; ``im2col.py``
the column transforms (also the ``im2col``/``col2im`` ops); ``_core.py`` the generic
core the kernels run unless their runner brings its own (the numpy backend's, with its
layouts, is ``mxasync/backends/numpy/kernels/conv``).  This package re-exports
nothing: import the module you need.
"""
