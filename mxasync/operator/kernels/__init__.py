"""Numerical kernels of the neural-network operators, as pure functions over ``xp``.

Each kernel takes the array namespace first (``numpy`` on CPU, ``cupy`` on GPU, a plugin's
own) and returns new arrays; the operator layer copies them into outputs per ``OpReqType``.
Optimizer updates are the exception: they change their state arrays in place. Parameter
names and defaults follow MXNet 1.9.  The steps a backend may run its own way (GEMMs,
splitting over threads, cache blocks, the convolution core) go through the kernel's runner
(``run=``, :mod:`._runner`); a backend hands its runner in through its overrides.

This package re-exports nothing: import the kernel module you need
(``from mxasync.operator.kernels import pooling``), so a convolution loads only its own.
"""
