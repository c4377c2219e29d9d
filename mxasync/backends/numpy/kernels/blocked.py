"""Run an elementwise in-place update block by block, so all its passes find the block in cache.

An optimizer update is several numpy passes over the weight and its states (``mom *= momentum``,
``tmp = grad * step``, ``mom += tmp``, ...). Pass by pass over a whole 400k-float weight each pass
streams every array from memory again; run over blocks of a few 10k elements, every pass after the
first reads the block from L2. ``update(*views, *scratch)`` gets the same element range of every
array (flat views) plus block-sized scratch arrays, and must only compute elementwise, so its
results are bit-identical to one whole-array call.

>>> import numpy as np
>>> w, g = np.ones(5), np.arange(5.0)
>>> def step(w, g, tmp):
...     np.multiply(g, 0.5, out=tmp)
...     w -= tmp
>>> blocked(step, w, g, scratch=1); w
array([ 1. ,  0.5,  0. , -0.5, -1. ])
"""

from __future__ import annotations

from collections.abc import Callable

import numpy

from .. import parallel

__all__ = ["blocked", "block_size", "BLOCK_BYTES"]

#: Bytes of each array in one block: 64k float32 or 32k float64 elements. Swept with
#: ``benchmarks/optimizer.py --blocks`` (sgd_mom: 3 arrays + 1 scratch; adam: 4 + 2) on 400k and 4M weights
#: on a 2-core Xeon (48 KiB L1d, 2 MiB L2 per core): 256 KiB per array was best for both dtypes, 1.7-2x
#: faster than whole-array passes (float32: 64k elements 4-7% ahead of 32k and 20-25% of 16k; float64: 32k
#: 3% ahead of 16k, 7-10% of 64k, 30-60% of 128k). A kernel's 4-7 blocks (1-1.75 MiB) then stay in L2
#: together; smaller blocks pay more Python and ufunc overhead per element.
BLOCK_BYTES = 1 << 18


def block_size(dtype) -> int:
    """Elements per block for arrays of ``dtype``."""
    return max(1, BLOCK_BYTES // numpy.dtype(dtype).itemsize)


def _same_flat(arrays) -> bool:
    """Whether every array is C-contiguous with the first's shape (so flat slices pair up elementwise).

    Dtypes may differ (a float16 gradient of a float32 master weight): blocks count elements.
    """
    shape = arrays[0].shape
    return all(a.flags.c_contiguous and a.shape == shape for a in arrays)


def blocked(update: Callable, *arrays, scratch: int = 0, passes: int = 4) -> None:
    """``update(*arrays, *tmps)`` over blocks of ``block_size(arrays[0].dtype)`` elements; ``tmps`` are
    ``scratch`` arrays with the first array's dtype.

    For C-contiguous arrays of one shape bigger than a block: block by block, and when
    ``passes * size`` is worth splitting, over ranges run on the kernel threads (each range itself
    block by block). Anything else (small arrays, other layouts) is one direct call. ``passes``: about
    how many passes over the arrays ``update`` makes (whether splitting pays).
    """
    first = arrays[0]
    # cheap tests first: a small array pays one comparison or two on top of the direct call
    if first.nbytes > BLOCK_BYTES or passes * first.size >= parallel.MIN_ELEMENTS:
        if _run_blocks(update, arrays, scratch, passes):
            return
    update(*arrays, *map(numpy.empty_like, [first] * scratch))


def _run_blocks(update: Callable, arrays, scratch: int, passes: int) -> bool:
    """``blocked`` on arrays that may be big enough; False (nothing run) where one call is better."""
    first = arrays[0]
    n, block = first.size, block_size(first.dtype)
    split = parallel.worth_splitting(passes * n)
    if (n <= block and not split) or not _same_flat(arrays):
        return False
    flats = [a.reshape(-1) for a in arrays]

    def over(lo: int, hi: int) -> None:
        tmps = [numpy.empty(min(block, hi - lo), first.dtype) for _ in range(scratch)]
        for start in range(lo, hi, block):
            stop = min(hi, start + block)
            update(*(f[start:stop] for f in flats), *(t[: stop - start] for t in tmps))

    if split:
        parallel.split(over, n, min_size=parallel.MIN_ELEMENTS // 2)
    else:
        over(0, n)
    return True
