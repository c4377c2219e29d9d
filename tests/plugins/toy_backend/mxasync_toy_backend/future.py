"""A plugin written for a later plugin contract (version 2): mxasync refuses it, and says so only in a
process that asks for its device type ``toy_future``."""

from __future__ import annotations

import numpy

from mxasync.backends import PLUGIN_API_VERSION, Backend


class FutureBackend(Backend):
    name = "toy_future"
    device_type = "toy_future"
    api_version = PLUGIN_API_VERSION + 1

    def start(self):
        self.xp = numpy
