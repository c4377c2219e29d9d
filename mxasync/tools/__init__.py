"""Command-line tools that ship with mxasync, run as ``mxasync <command>`` (``mxasync im2rec``, ``mxasync launch``)."""
