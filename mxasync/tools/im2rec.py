"""im2rec: make image lists and pack images into RecordIO files (MXNet's ``tools/im2rec.py``).

Two modes, as in MXNet::

    mxasync im2rec --list --recursive data/train images/   # writes data/train.lst
    mxasync im2rec --resize 256 --num-thread 4 data/train images/  # .lst -> .rec + .idx

A ``.lst`` line is ``index<TAB>label[<TAB>label...]<TAB>relative/path``. With
``--recursive`` every folder holding images is a class, numbered 0, 1, ... in
the order of a sorted walk from ``root`` (MXNet's rule: nested folders are
classes of their own); without it the images directly in ``root`` get label 0.
Pack mode reads every ``PREFIX*.lst`` and writes ``.rec``/``.idx`` next to it;
records are ``IRHeader(0, label, index, 0)`` + the encoded image, in list order.
Unreadable images are reported on stderr and skipped.

Differences from MXNet: worker threads instead of processes (decode, resize and
encode release the GIL); ``--shuffle``/``--no-shuffle`` and ``--seed`` (MXNet
always seeds 100) choose the list order.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor

from ..atomic import atomic_open
from ..io.image import codec
from ..io.image.augment import center_crop, resize_short
from ..io.recordio import IRHeader, MXIndexedRecordIO, pack

__all__ = ["main", "list_images", "write_list", "read_list", "make_lists", "pack_list"]

ListItem = tuple[int, str, list[float]]


def list_images(root: str, recursive: bool, exts: Sequence[str]) -> Iterator[ListItem]:
    """Yield ``(index, relative path, [label])`` for the images under ``root``."""
    exts = tuple(e.lower() for e in exts)
    index = 0
    if not recursive:
        for name in sorted(os.listdir(root)):
            if os.path.isfile(os.path.join(root, name)) and name.lower().endswith(exts):
                yield index, name, [0.0]
                index += 1
        return
    classes: dict[str, int] = {}
    seen: set[tuple[int, int]] = set()  # (device, inode) of every folder walked: a symlink loop ends here
    for folder, dirs, files in os.walk(root, followlinks=True):
        try:
            st = os.stat(folder)
        except OSError:
            dirs[:] = []
            continue
        if (st.st_dev, st.st_ino) in seen:
            print(f"im2rec: skipping {folder}: a symbolic link leads back to a folder already listed", file=sys.stderr)
            dirs[:] = []
            continue
        seen.add((st.st_dev, st.st_ino))
        dirs.sort()
        for name in sorted(files):
            if not name.lower().endswith(exts):
                continue
            label = classes.setdefault(folder, len(classes))
            yield index, os.path.relpath(os.path.join(folder, name), root), [float(label)]
            index += 1


def write_list(path: str, items: Sequence[ListItem]) -> None:
    """Write ``.lst`` lines ``index<TAB>labels...<TAB>path``."""
    with atomic_open(path, "w") as f:
        for index, rel, labels in items:
            f.write("\t".join([str(index), *(f"{v:f}" for v in labels), rel]) + "\n")


def read_list(path: str) -> Iterator[ListItem]:
    """Parse a ``.lst`` file; raises ``ValueError`` naming the line on a malformed one."""
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            fields = [x.strip() for x in line.rstrip("\n").split("\t")]
            if fields == [""]:
                continue
            try:
                if len(fields) < 3:
                    raise ValueError("need index, label(s) and path")
                yield int(fields[0]), fields[-1], [float(v) for v in fields[1:-1]]
            except ValueError as e:
                raise ValueError(f"{path}:{lineno}: bad list line {line.rstrip()!r}: {e}") from None


def make_lists(args: argparse.Namespace) -> list[str]:
    """``--list`` mode: split the images into chunks and train/val/test lists; returns the files written."""
    items = list(list_images(args.root, args.recursive, args.exts))
    if args.shuffle:
        random.Random(args.seed).shuffle(items)
    chunks = max(1, args.chunks)
    per_chunk = (len(items) + chunks - 1) // chunks if items else 0
    written = []
    for c in range(chunks):
        chunk = items[c * per_chunk:(c + 1) * per_chunk]
        tag = f"_{c}" if chunks > 1 else ""
        n_train, n_test = int(len(chunk) * args.train_ratio), int(len(chunk) * args.test_ratio)
        if args.train_ratio >= 1.0:
            parts = [(f"{args.prefix}{tag}.lst", chunk)]
        else:
            parts = [(f"{args.prefix}{tag}_train.lst", chunk[n_test:n_test + n_train])]
            if args.test_ratio > 0:
                parts.append((f"{args.prefix}{tag}_test.lst", chunk[:n_test]))
            if args.train_ratio + args.test_ratio < 1.0:
                parts.append((f"{args.prefix}{tag}_val.lst", chunk[n_test + n_train:]))
        for path, part in parts:
            write_list(path, part)
            written.append(path)
    return written


def _encode_one(item: ListItem, args: argparse.Namespace) -> bytes | None:
    index, rel, labels = item
    path = os.path.join(args.root, rel)
    label: float | list[float] = labels if (args.pack_label and len(labels) > 1) else labels[0]
    header = IRHeader(0, label, index, 0)
    try:
        with open(path, "rb") as f:
            data = f.read()
        if args.pass_through:
            return pack(header, data)
        img = codec.decode(data, flag=args.color)
        if args.center_crop:
            side = min(img.shape[:2])
            img = center_crop(img, (side, side))
        if args.resize > 0:
            img = resize_short(img, args.resize)
        return pack(header, codec.encode(img, args.encoding, quality=args.quality))
    except Exception as e:  # noqa: BLE001 -- skip the image like MXNet, but say why
        print(f"im2rec: skipping {path}: {e}", file=sys.stderr)
        return None


def pack_list(lst_path: str, args: argparse.Namespace) -> int:
    """Pack the images of one ``.lst`` into ``.rec``/``.idx`` beside it; returns the records written."""
    base = os.path.splitext(lst_path)[0]
    items = list(read_list(lst_path))
    count = 0
    writer = MXIndexedRecordIO(base + ".idx", base + ".rec", "w")
    try:
        with ThreadPoolExecutor(max(1, args.num_thread)) as pool:
            for item, record in zip(items, pool.map(lambda it: _encode_one(it, args), items), strict=True):
                if record is not None:
                    writer.write_idx(item[0], record)
                    count += 1
                    if count % 1000 == 0:
                        print(f"im2rec: {count} images packed into {base}.rec", file=sys.stderr)
    except BaseException:
        writer.discard()  # never publish a half-packed .rec/.idx
        raise
    if count == 0:
        writer.discard()  # an empty pack would replace a good .rec with nothing: keep what is there
        return 0
    writer.close()
    return count


def _find_lists(prefix: str) -> list[str]:
    if os.path.isfile(prefix) and prefix.endswith(".lst"):
        return [prefix]
    folder = prefix if os.path.isdir(prefix) else (os.path.dirname(prefix) or ".")
    stem = "" if os.path.isdir(prefix) else os.path.basename(prefix)
    return sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.startswith(stem) and f.endswith(".lst"))


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mxasync im2rec",
                                description="Create an image list or pack images into a RecordIO file.")
    p.add_argument("prefix", help="prefix of the .lst/.rec files (or a folder holding .lst files)")
    p.add_argument("root", help="folder with the images")
    g = p.add_argument_group("list mode")
    g.add_argument("--list", action="store_true", help="write PREFIX.lst instead of packing")
    g.add_argument("--exts", nargs="+", default=[".jpeg", ".jpg", ".png"], help="image file extensions")
    g.add_argument("--chunks", type=int, default=1, help="number of list chunks")
    g.add_argument("--train-ratio", type=float, default=1.0, help="fraction of images in the train list")
    g.add_argument("--test-ratio", type=float, default=0.0, help="fraction of images in the test list")
    g.add_argument("--recursive", action="store_true", help="one class per sub-folder of root")
    g.add_argument("--shuffle", dest="shuffle", action="store_true", default=True, help="shuffle the list (default)")
    g.add_argument("--no-shuffle", dest="shuffle", action="store_false", help="keep the sorted file order")
    g.add_argument("--seed", type=int, default=100, help="seed of the list shuffle")
    g = p.add_argument_group("pack mode")
    g.add_argument("--pass-through", action="store_true", help="store the files' bytes without re-encoding")
    g.add_argument("--resize", type=int, default=0, help="resize the shorter side to this many pixels")
    g.add_argument("--center-crop", action="store_true", help="crop the centre square first")
    g.add_argument("--quality", type=int, default=95, help="JPEG quality (1-100) or PNG compression (0-9)")
    g.add_argument("--num-thread", type=int, default=1, help="threads decoding and encoding")
    g.add_argument("--color", type=int, default=1, choices=[-1, 0, 1], help="1 colour, 0 gray, -1 as stored")
    g.add_argument("--encoding", default=".jpg", choices=[".jpg", ".png"], help="encoding of the packed images")
    g.add_argument("--pack-label", action="store_true", help="store every label of a multi-label line")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run im2rec with ``argv`` (``sys.argv[1:]`` by default); returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    for flag, value, low in (("--resize", args.resize, 0), ("--chunks", args.chunks, 1),
                             ("--num-thread", args.num_thread, 1), ("--quality", args.quality, 0)):
        if value < low:
            parser.error(f"{flag} must be at least {low}, got {value}")
    if not (0.0 <= args.train_ratio <= 1.0 and 0.0 <= args.test_ratio <= 1.0
            and args.train_ratio + args.test_ratio <= 1.0):
        parser.error(f"--train-ratio {args.train_ratio} and --test-ratio {args.test_ratio}: each in [0, 1], "
                     "their sum at most 1")
    try:
        return _run(args)
    except OSError as exc:  # a missing folder, a full disk, no permission: one line, not a traceback
        print(f"im2rec: {exc}", file=sys.stderr)
        return 1


def _run(args: argparse.Namespace) -> int:
    if not os.path.isdir(args.root):
        print(f"im2rec: the image root {args.root!r} is not a folder", file=sys.stderr)
        return 1
    folder = os.path.dirname(os.path.abspath(args.prefix))
    if not os.path.isdir(folder):
        what = "lists" if args.list else "records"
        print(f"im2rec: cannot write the {what} of {args.prefix!r}: the folder {folder!r} does not exist "
              "(create it first)", file=sys.stderr)
        return 1
    if args.list:
        for path in make_lists(args):
            print(f"im2rec: wrote {path}")
        return 0
    lists = _find_lists(args.prefix)
    if not lists:
        print(f"im2rec: no .lst file matches {args.prefix!r}; create one with --list", file=sys.stderr)
        return 1
    status = 0
    for lst in lists:
        n = pack_list(lst, args)
        rec = f"{os.path.splitext(lst)[0]}.rec"
        if n == 0:
            kept = "; the existing one is kept" if os.path.exists(rec) else ""
            print(f"im2rec: no image of {lst} could be packed (missing or unreadable files under "
                  f"{args.root!r}?): {rec} not written{kept}", file=sys.stderr)
            status = 1
        else:
            print(f"im2rec: packed {n} images from {lst} into {rec}")
    return status


if __name__ == "__main__":
    sys.exit(main())
