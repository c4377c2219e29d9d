"""Contrib ops (MXNet's src/operator/contrib, ``_contrib_*``; ``mx.nd.contrib`` / ``mx.sym.contrib``)."""
