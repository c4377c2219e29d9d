"""The .lst reader and the in-memory imglist of ImageIter."""

from __future__ import annotations

import pytest
from image_fixtures import LST, NAMES

from mxasync.image.imglist import from_imglist, read_lst


def test_read_lst_fixture():
    labels, keys = read_lst(LST, "float32")
    assert keys == list(range(len(NAMES)))
    assert labels[3][0].tolist() == [3.0] and labels[3][1] == NAMES[3]


def test_read_lst_multi_label_dtype_and_blank_lines(tmp_path):
    path = tmp_path / "x.lst"
    path.write_text("5\t1\t2.5\ta/b.jpg\n\n7\t3\t4\tc.jpg\n")
    labels, keys = read_lst(path, "int32")
    assert keys == [5, 7] and labels[5][0].dtype.name == "int32" and labels[5][0].tolist() == [1, 2]
    assert labels[7][1] == "c.jpg"


@pytest.mark.parametrize("text,pattern", [
    ("1\ta.jpg\n", r"x.lst:1: expected index, label\(s\) and path separated by tabs, got 2 field\(s\)"),
    ("0\t1\ta.jpg\nz\t1\tb.jpg\n", r"x.lst:2: invalid literal for int"),
    ("0\tone\ta.jpg\n", r"x.lst:1: could not convert string to float"),
])
def test_read_lst_errors(tmp_path, text, pattern):
    path = tmp_path / "x.lst"
    path.write_text(text)
    with pytest.raises(ValueError, match=pattern):
        read_lst(path, "float32")


def test_read_lst_missing_file(tmp_path):
    with pytest.raises(ValueError, match=r"ImageIter: cannot read path_imglist '.*nope.lst'"):
        read_lst(tmp_path / "nope.lst", "float32")


@pytest.mark.parametrize("item,expected", [
    ([1, "a"], [1.0]), ([[2, 3], "a"], [2.0, 3.0]), ([4, 5, 6, "a"], [4.0, 5.0, 6.0]), ([7.5, "a"], [7.5]),
])
def test_from_imglist_label_forms(item, expected):
    labels, keys = from_imglist([item], "float64")
    assert keys == ["1"] and labels["1"][0].tolist() == expected and labels["1"][1] == "a"


def test_from_imglist_errors():
    with pytest.raises(ValueError, match=r"imglist item 1 must be \[label\(s\), path\], got \['x'\]"):
        from_imglist([[0, "a"], ["x"]], "float32")
