"""The order MXNet 1.9.1's CPU ``topk`` / ``sort`` / ``argsort`` give equal values.

MXNet's CPU kernel (``TopKSort`` in its ``ordering_op-inl.h``) sorts a row's positions with C++'s
``std::sort`` when ``k * 8 > n`` and ``std::partial_sort`` (a heap) otherwise, comparing values only: the
order of ties is whatever GCC's libstdc++ algorithms leave (an introsort with median-of-three pivots and a
final insertion sort; a binary heap), neither stable nor by position. Detection post-processing (``topk`` of
saturated scores) lists boxes in that order. This module runs those algorithms step for step on a row, so the
positions equal MXNet's; :func:`mxnet_order` is called only for rows with ties, where any other correct sort
could differ.

>>> import numpy as np
>>> mxnet_order(np.ones(20), 5, ascend=False).tolist()  # MXNet's topk(ones((1, 20)), k=5)
[10, 19, 18, 17, 16]
>>> mxnet_order(np.ones(40), 5, ascend=False).tolist()  # k * 8 <= n: a heap (std::partial_sort)
[3, 4, 1, 0, 2]
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["mxnet_order", "rows_with_ties"]

_THRESHOLD = 16  # libstdc++'s _S_threshold


def rows_with_ties(rows: np.ndarray) -> np.ndarray:
    """Indices of the rows (of a 2-D array) holding a value twice; rows with NaNs are left out (no strict
    order exists for them)."""
    s = np.sort(rows, axis=-1)
    ties = (s[:, 1:] == s[:, :-1]).any(axis=-1)
    if rows.dtype.kind == "f":
        ties &= ~np.isnan(rows).any(axis=-1)
    return np.nonzero(ties)[0]


def mxnet_order(values: np.ndarray, k: int, ascend: bool) -> np.ndarray:
    """The first ``k`` positions of the 1-D ``values`` in the order MXNet's CPU topk/sort gives."""
    vals = values.tolist()
    n = len(vals)
    if ascend:
        def comp(i: int, j: int) -> bool:
            return vals[i] < vals[j]
    else:
        def comp(i: int, j: int) -> bool:
            return vals[i] > vals[j]
    idx = list(range(n))
    if k * 8 > n:
        _sort(idx, 0, n, comp)
    else:
        _partial_sort(idx, 0, k, n, comp)
    return np.asarray(idx[:k], dtype=np.int64)


def _sort(a: list, first: int, last: int, comp: Callable) -> None:
    if last - first > 1:
        _introsort_loop(a, first, last, 2 * ((last - first).bit_length() - 1), comp)
        _final_insertion_sort(a, first, last, comp)


def _introsort_loop(a: list, first: int, last: int, depth_limit: int, comp: Callable) -> None:
    while last - first > _THRESHOLD:
        if depth_limit == 0:
            _partial_sort(a, first, last, last, comp)
            return
        depth_limit -= 1
        cut = _partition_pivot(a, first, last, comp)
        _introsort_loop(a, cut, last, depth_limit, comp)
        last = cut


def _partition_pivot(a: list, first: int, last: int, comp: Callable) -> int:
    mid = first + (last - first) // 2
    _move_median_to_first(a, first, first + 1, mid, last - 1, comp)
    return _unguarded_partition(a, first + 1, last, first, comp)


def _move_median_to_first(a: list, result: int, x: int, y: int, z: int, comp: Callable) -> None:
    ax, ay, az = a[x], a[y], a[z]
    if comp(ax, ay):
        pick = y if comp(ay, az) else (z if comp(ax, az) else x)
    elif comp(ax, az):
        pick = x
    elif comp(ay, az):
        pick = z
    else:
        pick = y
    a[result], a[pick] = a[pick], a[result]


def _unguarded_partition(a: list, first: int, last: int, pivot: int, comp: Callable) -> int:
    p = a[pivot]
    while True:
        while comp(a[first], p):
            first += 1
        last -= 1
        while comp(p, a[last]):
            last -= 1
        if not first < last:
            return first
        a[first], a[last] = a[last], a[first]
        first += 1


def _final_insertion_sort(a: list, first: int, last: int, comp: Callable) -> None:
    if last - first > _THRESHOLD:
        _insertion_sort(a, first, first + _THRESHOLD, comp)
        for i in range(first + _THRESHOLD, last):
            _unguarded_linear_insert(a, i, comp)
    else:
        _insertion_sort(a, first, last, comp)


def _insertion_sort(a: list, first: int, last: int, comp: Callable) -> None:
    for i in range(first + 1, last):
        if comp(a[i], a[first]):
            val = a[i]
            a[first + 1:i + 1] = a[first:i]
            a[first] = val
        else:
            _unguarded_linear_insert(a, i, comp)


def _unguarded_linear_insert(a: list, last: int, comp: Callable) -> None:
    val = a[last]
    nxt = last - 1
    while comp(val, a[nxt]):
        a[last] = a[nxt]
        last = nxt
        nxt -= 1
    a[last] = val


def _partial_sort(a: list, first: int, middle: int, last: int, comp: Callable) -> None:
    _heap_select(a, first, middle, last, comp)
    while middle - first > 1:  # sort_heap
        middle -= 1
        _pop_heap(a, first, middle, middle, comp)


def _heap_select(a: list, first: int, middle: int, last: int, comp: Callable) -> None:
    length = middle - first
    if length > 1:  # make_heap
        parent = (length - 2) // 2
        while True:
            _adjust_heap(a, first, parent, length, a[first + parent], comp)
            if parent == 0:
                break
            parent -= 1
    for i in range(middle, last):
        if comp(a[i], a[first]):
            _pop_heap(a, first, middle, i, comp)


def _pop_heap(a: list, first: int, last: int, result: int, comp: Callable) -> None:
    value = a[result]
    a[result] = a[first]
    _adjust_heap(a, first, 0, last - first, value, comp)


def _adjust_heap(a: list, first: int, hole: int, length: int, value: int, comp: Callable) -> None:
    top = hole
    child = hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if comp(a[first + child], a[first + child - 1]):
            child -= 1
        a[first + hole] = a[first + child]
        hole = child
    if length & 1 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        a[first + hole] = a[first + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2  # push_heap
    while hole > top and comp(a[first + parent], value):
        a[first + hole] = a[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    a[first + hole] = value
