"""MXNet's ``_numpy_op_doc``: the documented signatures of the registry's ``_np_*`` op names.

mxasync's NumPy-interface ops are ``_npi_*`` ops wrapped by ``mx.np`` functions; the only
``_np_`` name in the registry is ``_np_cumsum`` (an alias of ``cumsum``, as in MXNet), and
its public face is ``mx.np.cumsum``, whose signature is documented here.
"""


def _np_cumsum(a, axis=None, dtype=None, out=None):
    """Return the cumulative sum of the elements along a given axis (``mx.np.cumsum``)."""
