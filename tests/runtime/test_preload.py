"""``await mx.preload_async()`` loads the operator registry in a worker thread: the loop keeps running."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import asyncio, sys
    import mxasync as mx

    assert "mxasync.ndarray" not in sys.modules

    async def main():
        ticks = 0
        done = asyncio.ensure_future(mx.preload_async())
        while not done.done():  # the loop runs other work while the registry loads
            ticks += 1
            await asyncio.sleep(0)
        await done
        a = mx.nd.ones((2,))  # loaded already: the first use on the loop costs no import
        await a
        return ticks

    ticks = asyncio.run(main())
    print("ticks", ticks, "loaded", "mxasync.ndarray" in sys.modules)
""")


def test_preload_async_keeps_the_loop_running():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=dict(os.environ, MXASYNC_PRELOAD="0"),
                         timeout=240)
    assert out.returncode == 0, out.stderr[-2000:]
    words = out.stdout.split()
    assert words[words.index("loaded") + 1] == "True"
    assert int(words[words.index("ticks") + 1]) > 1  # the loop kept turning during the load
