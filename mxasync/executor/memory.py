"""The memory planner: one storage block per group of entries whose lifetimes do not overlap.

Entries are visited in execution order.  An output takes its input's block in
place when the op allows it (``forward_inplace_option`` /
``backward_inplace_option``), the sizes match and this op is the input's last
reader; otherwise it takes a freed block of a similar size (growing it if
needed, as MXNet's pool does within a factor of 16), else a new block.  An
entry's block is freed after its last reader.  Entries in one block later
share one NDArray chunk, hence one engine var.

>>> from mxasync.executor.memory import PlanOp, plan_memory
>>> ops = [PlanOp(reads=[0], writes=[1], inplace=[(0, 1)]), PlanOp(reads=[1], writes=[2])]
>>> plan = plan_memory([400, 400, 400], ops, external={0}, persistent={2})
>>> plan.storage, plan.block_sizes
([-1, 0, 1], [400, 400])
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections import Counter
from dataclasses import dataclass, field

__all__ = ["PlanOp", "MemoryPlan", "plan_memory", "MATCH_RANGE"]

MATCH_RANGE = 16


@dataclass
class PlanOp:
    reads: list[int] = field(default_factory=list)
    writes: list[int] = field(default_factory=list)
    inplace: list[tuple[int, int]] = field(default_factory=list)


@dataclass
class MemoryPlan:
    storage: list[int]       # block per entry; -1 for external entries
    block_sizes: list[int]
    inplace: set[int]        # entries written in place over their input
    planned_bytes: int
    unplanned_bytes: int


def plan_memory(nbytes: list[int], ops: list[PlanOp], external: set[int], persistent: set[int],
                enabled: bool = True) -> MemoryPlan:
    """Assign blocks to the internal entries of ``ops``; ``persistent`` entries are never freed."""
    storage = [-1] * len(nbytes)
    sizes: list[int] = []
    live: list[int] = []  # live entries per block
    # free blocks as (size, release order, block), sorted: best fit is a bisection, not a scan
    free: list[tuple[int, int, int]] = []
    released = 0
    refs = Counter()
    for op in ops:
        refs.update(op.reads)
    inplace_done: set[int] = set()

    def new_block(n: int) -> int:
        if enabled and free:
            # the smallest free block of n..16n bytes, else the largest of n/16..n (grown);
            # among equal sizes the one freed first
            i = bisect_left(free, (n,))
            if i == len(free) or free[i][0] > n * MATCH_RANGE:
                i = -1
                if bisect_left(free, (n,)) > 0:
                    largest = free[bisect_left(free, (n,)) - 1][0]
                    if largest * MATCH_RANGE >= n:
                        i = bisect_left(free, (largest,))
            if i >= 0:
                b = free.pop(i)[2]
                sizes[b] = max(sizes[b], n)
                return b
        sizes.append(n)
        live.append(0)
        return len(sizes) - 1

    def release(e: int) -> None:
        nonlocal released
        b = storage[e]
        if b < 0 or e in persistent:
            return
        live[b] -= 1
        if live[b] == 0:
            insort(free, (sizes[b], released, b))
            released += 1

    for op in ops:
        here = Counter(op.reads)
        donors: set[int] = set()
        for w in op.writes:
            if w in external or storage[w] >= 0:
                continue
            b = -1
            if enabled:
                for r, w2 in op.inplace:
                    if (w2 == w and r not in external and r not in persistent and r not in donors
                            and storage[r] >= 0 and refs[r] == here[r] == 1 and nbytes[r] == nbytes[w]):
                        b = storage[r]
                        donors.add(r)
                        inplace_done.add(w)
                        break
            if b < 0:
                b = new_block(nbytes[w])
            storage[w] = b
            live[b] += 1
        for r in op.reads:
            refs[r] -= 1
            if refs[r] == 0 and r not in external:
                release(r)
        for w in op.writes:
            if refs[w] == 0 and w not in external and w not in persistent:
                release(w)
    internal = {e for op in ops for e in op.writes if e not in external}
    return MemoryPlan(storage, sizes, inplace_done, sum(sizes), sum(nbytes[e] for e in internal))
