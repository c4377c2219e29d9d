"""``mx.monitor.Monitor`` (``mx.mon``): statistics of every op output, gradient and argument, every N batches.

>>> import mxasync as mx
>>> net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc")
>>> exe = net.simple_bind(mx.cpu(), data=(1, 3))
>>> mon = mx.mon.Monitor(1, pattern="fc_output")
>>> mon.install(exe)
>>> mon.tic(); _ = exe.forward(); [(step, name) for step, name, _ in mon.toc()]
[(1, 'fc_output')]
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable

from .ndarray.ndarray import NDArray

__all__ = ["Monitor"]


def _default_stat(x: NDArray) -> NDArray:
    """MXNet's default statistic: ``norm(x) / sqrt(x.size)``."""
    from . import ndarray as nd

    return nd.norm(x) / math.sqrt(x.size)


class Monitor:
    """Collects ``stat_func(array)`` for arrays whose name matches ``pattern``, every ``interval`` batches.

    ``install(executor)`` hooks an executor; ``tic()`` before a batch, ``toc()`` after it
    returns ``[(step, name, 'value\\t...'), ...]`` (sorted by name with ``sort=True``).
    """

    def __init__(self, interval: int, stat_func: Callable | None = None, pattern: str = ".*", sort: bool = False,
                 monitor_all: bool = False) -> None:
        self.interval = int(interval)
        self.stat_func = stat_func or _default_stat
        self.activated = False
        self.queue: list = []
        self.step = 0
        self.exes: list = []
        self.re_prog = re.compile(pattern)
        self.sort = sort
        self.monitor_all = monitor_all

    def stat_helper(self, name: str, array: NDArray) -> None:
        if not self.activated or not self.re_prog.match(name):
            return
        self.queue.append((self.step, name, self.stat_func(array)))

    def install(self, exe) -> None:
        exe.set_monitor_callback(self.stat_helper, self.monitor_all)
        self.exes.append(exe)

    def tic(self) -> None:
        """Start collecting for this batch if it is one of every ``interval``."""
        if self.step % self.interval == 0:
            for exe in self.exes:
                for array in exe.arg_arrays:
                    array.wait_to_read()
                for array in exe.aux_arrays:
                    array.wait_to_read()
            self.queue = []
            self.activated = True
        self.step += 1

    def toc(self) -> list[tuple[int, str, str]]:
        """The statistics of this batch (the arguments' too), as strings; empty when not collecting."""
        if not self.activated:
            return []
        for exe in self.exes:
            for array in exe.arg_arrays:
                array.wait_to_read()
            for array in exe.aux_arrays:
                array.wait_to_read()
        for exe in self.exes:
            for name, array in zip(exe._symbol.list_arguments(), exe.arg_arrays, strict=False):
                if self.re_prog.match(name):
                    self.queue.append((self.step, name, self.stat_func(array)))
            for name, array in zip(exe._symbol.list_auxiliary_states(), exe.aux_arrays, strict=False):
                if self.re_prog.match(name):
                    self.queue.append((self.step, name, self.stat_func(array)))
        self.activated = False
        res = []
        if self.sort:
            self.queue.sort(key=lambda x: x[1])
        for n, k, v_list in self.queue:
            if isinstance(v_list, NDArray):
                v_list = [v_list]
            s = "".join((str(v.asscalar()) if v.shape in ((1,), ()) else str(v.asnumpy())) + "\t" for v in v_list)
            res.append((n, k, s))
        self.queue = []
        return res

    def toc_print(self) -> None:
        """Log :meth:`toc`'s statistics (``logging.info``)."""
        for n, k, v in self.toc():
            logging.info("Batch: %7d %30s %s", n, k, v)
