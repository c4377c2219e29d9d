"""The numpy backend's convolution core, with its layouts.

``_core.py`` takes the generic core's arguments (``operator/kernels/conv/_core.py``) and
picks one layout per layer (``_banded.py``, ``_depthwise.py``, ``_batch_inner.py``, ``_shifted.py``, or
per-sample columns kept in ``_colstore.py`` for the backward pass); ``_columns.py`` holds its column
transforms.  Each module's docstring has the measurements behind its rule.  The kernels
reach it as ``NUMPY.conv_core()`` (:mod:`..runner`).
"""
