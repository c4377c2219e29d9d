"""A plugin that fails to import when ``MXASYNC_TOY_BROKEN=1`` (the tests set it).

Without the variable it is a harmless low-priority backend, so installing the
toy package does not make every other test run print a plugin warning.
"""

from __future__ import annotations

import os

from mxasync.backends import Backend

if os.environ.get("MXASYNC_TOY_BROKEN") == "1":
    raise ImportError("toy_broken: this plugin is broken on purpose")


class BrokenBackend(Backend):
    name = "toy_broken"
    device_type = "cpu_shared"
    priority = -1
