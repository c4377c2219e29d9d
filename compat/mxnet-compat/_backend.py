"""mxnet-compat's in-tree build backend (PEP 517): its wheel is two files and their metadata, so
building it needs nothing from a package index and ``pip install ./compat/mxnet-compat`` works
offline (a setuptools backend had pip fetch setuptools into an isolated build first)."""

from __future__ import annotations

import base64
import hashlib
import io
import os
import tarfile
import zipfile

NAME, VERSION = "mxnet_compat", "1.9.1.0"
FILES = ("mxnet_compat.py", "mxnet_compat.pth")  # the module and its start-up hook, into site-packages
METADATA = f"""Metadata-Version: 2.1
Name: mxnet-compat
Version: {VERSION}
Summary: Opt-in: 'import mxnet' gives mxasync (unmodified MXNet 1.x programs and libraries); a real MXNet always wins
Requires-Python: >=3.10
Requires-Dist: mxasync
"""
WHEEL = "Wheel-Version: 1.0\nGenerator: mxnet-compat _backend\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
HERE = os.path.dirname(os.path.abspath(__file__))


def _read(name: str) -> bytes:
    with open(os.path.join(HERE, name), "rb") as f:
        return f.read()


def _publish(folder: str, name: str, data: bytes) -> str:
    """Write ``folder/name`` whole or not at all (a temporary renamed over it)."""
    tmp = os.path.join(folder, f".{name}.tmp-{os.getpid()}")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, os.path.join(folder, name))
    return name


def _record(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _dist_info() -> list[tuple[str, bytes]]:
    dist = f"{NAME}-{VERSION}.dist-info"
    return [(f"{dist}/METADATA", METADATA.encode()), (f"{dist}/WHEEL", WHEEL.encode()),
            (f"{dist}/top_level.txt", f"{NAME}\n".encode())]


def get_requires_for_build_wheel(config_settings=None) -> list[str]:
    return []


def get_requires_for_build_sdist(config_settings=None) -> list[str]:
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None) -> str:
    for name, data in _dist_info():
        os.makedirs(os.path.join(metadata_directory, os.path.dirname(name)), exist_ok=True)
        _publish(os.path.join(metadata_directory, os.path.dirname(name)), os.path.basename(name), data)
    return f"{NAME}-{VERSION}.dist-info"


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None) -> str:
    entries = [(name, _read(name)) for name in FILES] + _dist_info()
    record_name = f"{NAME}-{VERSION}.dist-info/RECORD"
    record = "".join(_record(n, d) + "\n" for n, d in entries) + f"{record_name},,\n"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries:
            z.writestr(name, data)
        z.writestr(record_name, record)
    return _publish(wheel_directory, f"{NAME}-{VERSION}-py3-none-any.whl", buf.getvalue())


def build_sdist(sdist_directory, config_settings=None) -> str:
    base = f"{NAME}-{VERSION}"
    pkg_info = METADATA.encode()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name in (*FILES, "_backend.py", "pyproject.toml", "README.md"):
            data = pkg_info if name == "PKG-INFO" else _read(name)
            info = tarfile.TarInfo(f"{base}/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        info.size = len(pkg_info)
        tar.addfile(info, io.BytesIO(pkg_info))
    return _publish(sdist_directory, f"{base}.tar.gz", buf.getvalue())
