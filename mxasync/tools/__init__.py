"""Command-line tools that ship with mxasync (``python -m mxasync.tools.im2rec``)."""
