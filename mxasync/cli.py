"""The ``mxasync`` command: ``mxasync <command> [options]``.

Commands are small modules with a ``main(argv)``; they are imported only when
named, so ``mxasync --help`` stays fast.
"""

from __future__ import annotations

import importlib
import os
import sys

# command -> (module, one-line help)
COMMANDS = {
    "im2rec": ("mxasync.tools.im2rec", "list and pack a folder of images into .lst/.rec/.idx"),
    "train": ("mxasync.train.cli", "train a LeNet or an MLP on the bundled digits (progress, checkpoint, trace)"),
    "launch": ("mxasync.tools.launch", "run a script on N MPI worker (and server) ranks through mpirun"),
    "run": ("mxasync.tools.run", "run an unmodified MXNet program: 'import mxnet' gives mxasync"),
    "export-onnx": ("mxasync.tools.export_onnx", "export a checkpoint (prefix + epoch) to an ONNX file"),
    "serve": ("mxasync.serving.cli", "serve models over HTTP with dynamic batching (TorchServe-compatible API)"),
}


def _usage() -> str:
    lines = ["usage: mxasync <command> [options]", "", "commands:"]
    lines += [f"  {name:<10} {help_}" for name, (_, help_) in COMMANDS.items()]
    lines += ["", "mxasync <command> --help shows a command's options; mxasync --version the version."]
    return "\n".join(lines)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mxasync")
    except PackageNotFoundError:  # run from a source tree that is not installed
        return "unknown (not installed)"


def main(argv: list[str] | None = None) -> int:
    try:
        code = _main(argv)
        sys.stdout.flush()  # here, where a closed pipe can still be caught (at exit it would print a traceback)
        return code
    except BrokenPipeError:
        # the reader went away (mxasync --help | head -1): stop quietly, as a program killed by SIGPIPE does,
        # and point stdout at /dev/null so the interpreter's last flush does not fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + 13


def _main(argv: list[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(_usage())
        return 0
    if argv[0] in ("-V", "--version"):
        print(f"mxasync {_version()}")
        return 0
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"mxasync: unknown command {name!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    try:
        module = importlib.import_module(COMMANDS[name][0])
        result = module.main(rest)
    except KeyboardInterrupt:
        # Ctrl-C ends a command with one line, not a traceback; 130 is the shell's code for SIGINT
        print(f"\nmxasync {name}: interrupted", file=sys.stderr)
        return 130
    return int(result or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
