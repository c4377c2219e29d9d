"""Peak memory of ``mx.nd.load`` on one large ``.params`` file, mxasync and (when installed) MXNet.

    python benchmarks/nd_load.py [--mb 400] [--mxnet /work/mxref/bin/python]

Each load runs in a fresh process; it prints JSON: the data size, and per library the
resident memory before the load, the peak (VmHWM) after it, and the peak's growth
over the data size (1.0 would be "exactly the data").
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

_CHILD = r"""
import sys, time
def status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024.0
lib = sys.argv[2]
mx = __import__(lib)
before = status("VmRSS")
t0 = time.perf_counter()
arrays = mx.nd.load(sys.argv[1])
seconds = time.perf_counter() - t0
print(before, status("VmHWM"), seconds, sum(a.size for a in arrays))
"""


def _measure(python: str, lib: str, path: str, data_mb: float) -> dict:
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    out = subprocess.run([python, "-c", _CHILD, path, lib], capture_output=True, text=True, env=env, check=True)
    before, peak, seconds, _ = out.stdout.split()[-4:]
    before, peak = float(before), float(peak)
    return {"rss_before_mb": round(before, 1), "peak_mb": round(peak, 1),
            "peak_growth_mb": round(peak - before, 1), "growth_over_data": round((peak - before) / data_mb, 2),
            "seconds": round(float(seconds), 3)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mb", type=int, default=400, help="size of the float32 data in MB")
    p.add_argument("--mxnet", default="/work/mxref/bin/python", help="a Python with MXNet 1.9 (skipped if absent)")
    args = p.parse_args()
    import numpy as np

    from mxasync.ndarray._serialization import save_arrays

    n = args.mb * (1 << 20) // 4
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "big.params")
        save_arrays(path, [np.ones(n, np.float32)])
        data_mb = n * 4 / (1 << 20)
        result = {"data_mb": data_mb, "file_mb": round(os.path.getsize(path) / (1 << 20), 1),
                  "mxasync": _measure(sys.executable, "mxasync", path, data_mb)}
        if os.path.exists(args.mxnet):
            result["mxnet"] = _measure(args.mxnet, "mxnet", path, data_mb)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
