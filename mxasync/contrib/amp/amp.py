"""MXNet's AMP entry points; each one says that mxasync has no automatic mixed precision.

The module exists so that code importing it (``from mxnet.contrib.amp import amp``)
loads; calling any of its functions raises instead of silently training in float32.
"""

from __future__ import annotations

__all__ = ["init", "init_trainer", "scale_loss", "unscale", "convert_symbol", "convert_model",
           "convert_hybrid_block"]


#: MXNet's flag that ``amp.init()`` ran; libraries read it (GluonNLP's attention masks pick -1e4 over -1e18
#: under AMP).  Here AMP never runs, so it stays False.
_amp_initialized = False


def _missing(name: str):
    def f(*args, **kwargs):
        raise NotImplementedError(f"mx.contrib.amp.{name}: mxasync does not provide automatic mixed precision; "
                                  "cast parameters and inputs with astype('float16') explicitly")
    f.__name__ = name
    f.__doc__ = f"Not provided: raises NotImplementedError (MXNet's ``amp.{name}``)."
    return f


init = _missing("init")
init_trainer = _missing("init_trainer")
scale_loss = _missing("scale_loss")
unscale = _missing("unscale")
convert_symbol = _missing("convert_symbol")
convert_model = _missing("convert_model")
convert_hybrid_block = _missing("convert_hybrid_block")
