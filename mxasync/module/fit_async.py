"""``await module.fit_async(...)``: ``fit`` for programs that run an event loop.

Each step that may block (binding, a training step's pushes, the end of an epoch,
scoring) runs in a worker thread through anyio; between steps the loop only
awaits NDArrays (the outputs and labels the metric reads), so the metric update
and the callbacks then touch ready arrays and the loop stays responsive.
Cancelling the awaiting task lets the step in flight finish (its pushes are
never half done) and then stops.
"""

from __future__ import annotations

import time
from functools import partial

import anyio
import anyio.to_thread

from ..model import BatchEndParam
from .base_module import DEFAULT_INIT, as_list

__all__ = ["fit_async"]


async def _ready(arrays) -> None:
    """Await ``arrays`` (a cancelled wait leaves the engine nothing to trip over)."""
    for a in arrays:
        await a


def _train_step(mod, batch) -> None:
    mod.forward_backward(batch)
    mod.update()


async def fit_async(mod, train_data, eval_data=None, *, eval_metric="acc", epoch_end_callback=None,
                    batch_end_callback=None, kvstore="local", optimizer="sgd",
                    optimizer_params=(("learning_rate", 0.01),), eval_end_callback=None,
                    eval_batch_end_callback=None, initializer=DEFAULT_INIT, arg_params=None, aux_params=None,
                    allow_missing: bool = False, force_rebind: bool = False, force_init: bool = False,
                    begin_epoch: int = 0, num_epoch: int | None = None, validation_metric=None, monitor=None,
                    sparse_row_id_fn=None) -> None:
    """Train like :meth:`BaseModule.fit` without blocking the caller's event loop."""
    run = anyio.to_thread.run_sync
    eval_metric, validation_metric = await run(partial(
        mod._fit_setup, train_data, eval_metric, kvstore, optimizer, optimizer_params, initializer, arg_params,
        aux_params, allow_missing, force_rebind, force_init, num_epoch, validation_metric, monitor))
    for epoch in range(begin_epoch, num_epoch):
        tic = time.time()
        eval_metric.reset()
        nbatch = 0
        async for batch in train_data:
            if monitor is not None:
                monitor.tic()
            await run(_train_step, mod, batch)
            await _ready([p for out in mod.get_outputs(merge_multi_context=False) for p in out]
                         + list(batch.label or ()))
            mod.update_metric(eval_metric, batch.label)
            if monitor is not None:
                monitor.toc_print()
            for cb in as_list(batch_end_callback):
                cb(BatchEndParam(epoch, nbatch, eval_metric, locals()))
            nbatch += 1
        await run(mod._fit_epoch_end, epoch, tic, eval_metric, epoch_end_callback)
        if eval_data is not None:
            res = await run(partial(mod.score, eval_data, validation_metric, score_end_callback=eval_end_callback,
                                    batch_end_callback=eval_batch_end_callback, epoch=epoch))
            for name, val in res:
                mod.logger.info("Epoch[%d] Validation-%s=%f", epoch, name, val)
        await train_data.reset_async()
