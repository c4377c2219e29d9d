"""``mx.random``: seeding the engine's generators and MXNet's samplers (``mx.random.uniform``, ...).

The samplers are those of ``mx.nd.random``, as in MXNet, where ``mx.random.uniform`` is
``mx.nd.random.uniform``.
"""

from .ndarray.random import (
    exponential,
    gamma,
    generalized_negative_binomial,
    multinomial,
    negative_binomial,
    normal,
    poisson,
    randint,
    randn,
    shuffle,
    uniform,
)
from .runtime.resource import seed

__all__ = ["seed", "uniform", "normal", "randn", "randint", "exponential", "gamma", "poisson",
           "negative_binomial", "generalized_negative_binomial", "multinomial", "shuffle"]
