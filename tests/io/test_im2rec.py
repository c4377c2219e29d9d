"""im2rec end to end on a tiny generated folder of images."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from mxasync.io.image import RecordImagePipeline, codec
from mxasync.io.recordio import MXIndexedRecordIO, unpack, unpack_img
from mxasync.tools import im2rec

pytest.importorskip("PIL")

# relative path -> (height, width); the label MXNet gives is the folder's rank in a sorted walk
FILES = {
    "cat/a.jpg": (20, 30), "cat/b.png": (24, 16), "cat/c.jpg": (18, 18),
    "dog/x.jpg": (30, 20), "dog/y.jpeg": (16, 40), "dog/puppy/z.png": (22, 22),
}
LABELS = {"cat": 0, "dog": 1, "dog/puppy": 2}


@pytest.fixture
def tree(tmp_path, gradient):
    root = tmp_path / "images"
    for i, (rel, (h, w)) in enumerate(FILES.items()):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(codec.encode(gradient(h, w, seed=i), os.path.splitext(rel)[1]))
    (root / "cat" / "notes.txt").write_text("not an image")
    (root / "top.png").write_bytes(codec.encode(gradient(10, 10), ".png"))
    return str(root), str(tmp_path / "out" / "data")


def read_lst(path):
    return list(im2rec.read_list(path))


def test_list_recursive(tree):
    root, prefix = tree
    os.makedirs(os.path.dirname(prefix))
    assert im2rec.main(["--list", "--recursive", "--no-shuffle", prefix, root]) == 0
    items = read_lst(prefix + ".lst")
    rels = [rel for _, rel, _ in items]
    assert rels == ["top.png", *FILES]  # sorted walk: root first, then cat, dog, dog/puppy
    assert [idx for idx, _, _ in items] == list(range(7))
    expected = {"top.png": 0.0, **{rel: float(LABELS[os.path.dirname(rel)] + 1) for rel in FILES}}
    assert {rel: labels[0] for _, rel, labels in items} == expected
    line = open(prefix + ".lst").readline()
    assert line == "0\t0.000000\ttop.png\n"


def test_list_flat_shuffle_and_split(tree):
    root, prefix = tree
    os.makedirs(os.path.dirname(prefix))
    im2rec.main(["--list", prefix, root])
    assert [rel for _, rel, _ in read_lst(prefix + ".lst")] == ["top.png"]
    im2rec.main(["--list", "--recursive", "--train-ratio", "0.5", "--test-ratio", "0.2", "--seed", "3", prefix, root])
    train, val, test = (read_lst(f"{prefix}_{s}.lst") for s in ("train", "val", "test"))
    assert (len(train), len(test), len(val)) == (3, 1, 3)
    assert sorted(r for part in (train, val, test) for _, r, _ in part) == sorted(["top.png", *FILES])
    im2rec.main(["--list", "--recursive", "--chunks", "2", "--seed", "3", prefix, root])
    chunks = [read_lst(f"{prefix}_{c}.lst") for c in (0, 1)]
    assert [len(c) for c in chunks] == [4, 3]
    again = prefix + "_again"
    im2rec.main(["--list", "--recursive", "--seed", "3", again, root])
    im2rec.main(["--list", "--recursive", "--seed", "3", prefix + "_same", root])
    assert read_lst(again + ".lst") == read_lst(prefix + "_same.lst")  # the shuffle is seeded


@pytest.mark.parametrize(("options", "check"), [
    (["--resize", "8", "--num-thread", "2", "--quality", "90"], "resize"),
    (["--center-crop", "--encoding", ".png"], "crop"),
    (["--pass-through"], "raw"),
    (["--color", "0", "--encoding", ".png"], "gray"),
])
def test_pack(tree, options, check, capsys):
    root, prefix = tree
    os.makedirs(os.path.dirname(prefix))
    im2rec.main(["--list", "--recursive", "--no-shuffle", prefix, root])
    with open(os.path.join(root, "cat", "broken.jpg"), "wb") as f:
        f.write(b"\xff\xd8\xff broken")
    with open(prefix + ".lst", "a") as f:
        f.write("7\t1.000000\tcat/broken.jpg\n")
    assert im2rec.main([*options, prefix, root]) == 0
    skipped = "skipping" in capsys.readouterr().err
    items = read_lst(prefix + ".lst")[:-1]
    reader = MXIndexedRecordIO(prefix + ".idx", prefix + ".rec", "r")
    if check == "raw":  # --pass-through stores bytes as they are, broken or not (as MXNet does)
        assert not skipped and reader.keys == [idx for idx, _, _ in items] + [7]
    else:  # the broken image is reported and left out
        assert skipped and reader.keys == [idx for idx, _, _ in items]
    for idx, rel, labels in items:
        h, w = (10, 10) if rel == "top.png" else FILES[rel]
        record = reader.read_idx(idx)
        header, img = unpack_img(record)
        assert header.id == idx and header.label == labels[0] and header.flag == 0
        if check == "resize":
            assert min(img.shape[:2]) == 8 and img.shape[2] == 3
            assert abs(img.shape[0] / img.shape[1] - h / w) < 0.15
        elif check == "crop":
            assert img.shape == (min(h, w), min(h, w), 3)
            assert unpack(record)[1][:4] == b"\x89PNG"
        elif check == "raw":
            with open(os.path.join(root, rel), "rb") as f:
                assert unpack(record)[1] == f.read()
        else:
            assert img.shape == (h, w)
    reader.close()


def test_pipeline_reads_im2rec_output(tree):
    root, prefix = tree
    os.makedirs(os.path.dirname(prefix))
    im2rec.main(["--list", "--recursive", prefix, root])
    im2rec.main(["--resize", "12", prefix, root])
    with RecordImagePipeline(prefix + ".rec", (3, 12, 12), 7, path_imgidx=prefix + ".idx") as pipe:
        batch = next(pipe)
    assert batch.data.shape == (7, 3, 12, 12) and batch.pad == 0
    assert sorted(batch.label.tolist()) == [0, 1, 1, 1, 2, 2, 3]
    assert np.isfinite(batch.data).all()


def test_pack_without_list_fails(tmp_path, capsys):
    assert im2rec.main([str(tmp_path / "nothing"), str(tmp_path)]) == 1
    assert "no .lst file" in capsys.readouterr().err


def test_bad_list_line(tmp_path):
    lst = tmp_path / "x.lst"
    lst.write_text("0\t1.0\ta.jpg\nzero\t1\tb.jpg\n")
    with pytest.raises(ValueError, match="x.lst:2"):
        read_lst(str(lst))


def test_module_entry_point():
    out = subprocess.run([sys.executable, "-m", "mxasync.tools.im2rec", "--help"], capture_output=True, text=True,
                         check=True, timeout=60)
    assert "--train-ratio" in out.stdout and "--num-thread" in out.stdout


@pytest.mark.parametrize("pack_label", [True, False])
def test_multi_label_list(tree, pack_label):
    root, prefix = tree
    os.makedirs(os.path.dirname(prefix))
    with open(prefix + ".lst", "w") as f:
        f.write("5\t1.000000\t2.500000\tcat/a.jpg\n9\t3.000000\t4.000000\tdog/x.jpg\n")
    im2rec.main([*(["--pack-label"] if pack_label else []), prefix, root])
    with MXIndexedRecordIO(prefix + ".idx", prefix + ".rec", "r") as reader:
        header, _ = unpack(reader.read_idx(5))
        assert reader.keys == [5, 9]
    if pack_label:
        assert header.flag == 2 and header.label.tolist() == [1.0, 2.5]
    else:
        assert header.flag == 0 and header.label == 1.0


def test_packing_nothing_keeps_the_existing_rec_and_fails(tree, tmp_path, capsys):
    root, prefix = tree
    os.makedirs(os.path.dirname(prefix))
    im2rec.main(["--list", "--recursive", "--no-shuffle", prefix, root])
    assert im2rec.main([prefix, root]) == 0
    before = {ext: open(prefix + ext, "rb").read() for ext in (".rec", ".idx")}
    capsys.readouterr()
    # the same list against a folder where none of its images are: nothing can be packed
    empty = tmp_path / "empty"
    empty.mkdir()
    assert im2rec.main([prefix, str(empty)]) == 1
    err = capsys.readouterr().err
    assert f"{prefix}.rec not written; the existing one is kept" in err
    assert {ext: open(prefix + ext, "rb").read() for ext in (".rec", ".idx")} == before
    assert not [f for f in os.listdir(os.path.dirname(prefix)) if ".tmp-" in f]  # no temporary left behind
