"""Issue 34, item 5 (readers): ``LibSVMIter`` names the file and line of a bad byte or a huge index
(main: a bare ``UnicodeDecodeError`` / ``OverflowError``), and ``export-onnx --input-shape 1,x`` is
refused (main read it as ``(1,)``)."""

from __future__ import annotations

import pytest

import mxasync as mx
from mxasync.tools import export_onnx

pytestmark = pytest.mark.fault


@pytest.mark.parametrize("content, message", [
    (b"1 0:1.5\n0 1:\xff\xfe\n", r"line 2: not UTF-8 text \(byte 4: b'\\xff'\); is it a LibSVM file\?"),
    (b"1 0:1\n1 99999999999999999999999:1\n", r"line 2: feature index 99999999999999999999999 but data_shape "
                                              r"allows 0\.\.3"),
    (b"1 0:1\n\n1 -1:2\n", r"line 3: feature index -1 but data_shape allows 0\.\.3"),
    (b"1 0:1e999999 2:x\n", r"line 1: cannot parse '1 0:1e999999 2:x'"),
])
def test_libsvm_errors_name_file_and_line(tmp_path, content, message):
    path = tmp_path / "bad.libsvm"
    path.write_bytes(content)
    with pytest.raises(mx.MXNetError, match=r"LibSVMIter: '.*bad\.libsvm' " + message):
        mx.io.LibSVMIter(data_libsvm=str(path), data_shape=(4,), batch_size=1)


@pytest.mark.parametrize("text", ["1,x", "1,", "1,,3", "x", "1x3x", "2.5,3"])
def test_export_onnx_refuses_a_shape_with_a_non_integer_part(text, capsys):
    with pytest.raises(SystemExit) as info:
        export_onnx.main(["model", "1", "--input-shape", text])
    assert info.value.code == 2
    assert f"{text!r} is not a shape like 1,3,224,224" in capsys.readouterr().err


def test_export_onnx_reads_both_spellings_of_a_shape():
    parse = export_onnx._shape
    assert parse("1,3,224,224") == parse("1x3x224x224") == parse(" 1,3,224,224 ") == (1, 3, 224, 224)
