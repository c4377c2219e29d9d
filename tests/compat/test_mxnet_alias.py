"""The opt-in ``mxnet`` alias: ``mxasync run``, the mxnet-compat package, the names libraries import."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import mxasync
from mxasync import mxnet_alias

ROOT = Path(__file__).resolve().parents[2]


def _env(*paths) -> dict:
    return dict(os.environ, PYTHONPATH=os.pathsep.join([*map(str, paths), str(ROOT)]))


def _run(args, env=None, cwd=None):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env or _env(), cwd=cwd,
                          timeout=180)


@pytest.fixture
def alias():
    if mxnet_alias.real_mxnet():
        pytest.skip("a real MXNet is installed here: the alias stays out of its way")
    mxnet_alias.install()
    yield
    mxnet_alias.uninstall()


def test_the_alias_maps_mxnet_to_mxasync_and_reports_the_api_version(alias):
    import mxnet
    import mxnet.gluon.model_zoo.vision as vision
    from mxnet import gluon, nd

    import mxasync.gluon.model_zoo.vision as own_vision

    assert mxnet.__version__ == "1.9.1" and mxasync.__version__ != "1.9.1"
    assert vision is own_vision and gluon is mxasync.gluon and nd is mxasync.nd
    assert sys.modules["mxnet.gluon"] is mxasync.gluon  # one module, not a second copy under another name
    assert isinstance(mxnet.nd.ones((2,)), mxasync.nd.NDArray) and mxnet.cpu() == mxasync.cpu()


def test_names_gluonnlp_imports(alias):
    import mxnet
    from mxnet.gluon.data.dataloader import ForkingPickler
    from mxnet.gluon.model_zoo.model_store import _model_sha1, short_hash
    from mxnet.gluon.utils import replace_file

    for fn in ("get_register_func", "get_alias_func", "get_create_func", "get_registry"):
        assert callable(getattr(mxnet.registry, fn))
    assert ForkingPickler.__module__ == "multiprocessing.reduction"
    _model_sha1["my_model"] = "0123456789abcdef0123456789abcdef01234567"  # GluonNLP adds its models this way
    try:
        assert short_hash("my_model") == "01234567"
    finally:
        del _model_sha1["my_model"]
    assert callable(replace_file)
    from mxnet.contrib import amp

    assert amp.amp._amp_initialized is False  # GluonNLP's attention cells read it to pick their mask value


def test_register_alias_create(tmp_path):
    class Emb:
        pass

    reg = mxasync.registry.get_register_func(Emb, "embedding")
    alias_ = mxasync.registry.get_alias_func(Emb, "embedding")
    create = mxasync.registry.get_create_func(Emb, "embedding")

    @alias_("glove6b")
    class GloVe(Emb):
        def __init__(self, dim=50):
            self.dim = dim

    reg(GloVe)
    assert create("GloVe", dim=100).dim == 100 and create(embedding="glove6b").dim == 50
    assert set(mxasync.registry.get_registry(Emb)) == {"glove", "glove6b"}
    with pytest.raises(ValueError, match="nope is not registered"):
        create("nope")
    with pytest.raises(TypeError, match="subclass of Emb"):
        reg(int)
    (tmp_path / "a").write_text("new")
    (tmp_path / "b").write_text("old")
    mxasync.gluon.utils.replace_file(str(tmp_path / "a"), str(tmp_path / "b"))
    assert (tmp_path / "b").read_text() == "new" and not (tmp_path / "a").exists()


def test_mxasync_run_runs_an_unmodified_mxnet_script(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text("import sys\nimport mxnet as mx\nfrom mxnet.gluon import nn\n"
                      "net = nn.Dense(2); net.initialize()\n"
                      "print(mx.__version__, sys.argv[1:], net(mx.nd.ones((1, 3))).shape)\n")
    res = _run(["-m", "mxasync", "run", str(script), "--epochs", "3"])
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.strip() == "1.9.1 ['--epochs', '3'] (1, 2)"
    res = _run(["-m", "mxasync", "run", str(tmp_path / "missing.py")])
    assert res.returncode == 2 and "no such script" in res.stderr and "Traceback" not in res.stderr


def test_the_alias_never_shadows_a_real_mxnet(tmp_path):
    real = tmp_path / "site" / "mxnet"
    real.mkdir(parents=True)
    (real / "__init__.py").write_text("__version__ = 'real'\n")
    script = tmp_path / "prog.py"
    script.write_text("import mxnet\n")
    res = _run(["-m", "mxasync", "run", str(script)], env=_env(tmp_path / "site"))
    assert res.returncode == 2 and "a real MXNet is installed" in res.stderr and str(real) in res.stderr
    code = "import mxasync.mxnet_alias as a; a.install(); import mxnet; print(mxnet.__version__)"
    res = _run(["-c", code], env=_env(tmp_path / "site"))
    assert res.returncode == 0 and res.stdout.strip() == "real"


def test_the_mxnet_compat_package_is_opt_in(tmp_path):
    src = ROOT / "compat" / "mxnet-compat"
    site = tmp_path / "site"
    site.mkdir()
    for name in ("mxnet_compat.py", "mxnet_compat.pth"):
        shutil.copy(src / name, site / name)
    assert "mxnet_compat.pth" in (src / "_backend.py").read_text()  # the wheel ships the start-up hook
    check = "import importlib.util; print(importlib.util.find_spec('mxnet') is None)"
    assert _run(["-c", check]).stdout.strip() == "True"  # without the package: no mxnet at all
    code = f"import site; site.addsitedir({str(site)!r}); import mxnet; print(mxnet.__version__, mxnet.nd.ones((1,)))"
    res = _run(["-c", code])
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.startswith("1.9.1")
    res = _run(["-c", f"import site; site.addsitedir({str(site)!r}); import mxnet_compat; mxnet_compat.main()"])
    assert "gives mxasync" in res.stdout


@pytest.mark.parametrize("library, module", [("gluoncv", "gluoncv.model_zoo"), ("gluonnlp", "gluonnlp.model")])
def test_gluon_model_zoos_import_through_the_alias(library, module):
    if importlib.util.find_spec(library) is None:
        pytest.skip(f"{library} is not installed here")
    code = (f"import mxasync.mxnet_alias as a; a.install(); import {module} as m; "
            "print(len([n for n in dir(m) if not n.startswith('_')]))")
    res = _run(["-c", code])
    assert res.returncode == 0, res.stderr[-3000:]
    assert int(res.stdout.strip()) > 0
