"""The package installs from the checkout with pip, offline, into a venv:
nothing to compile, the py.typed marker with it, and it finds the library.
Two ways, both with no network: build isolation fed from Debian's wheels
(python3-setuptools-whl, python3-wheel-whl in /usr/share/python-wheels), and
--no-build-isolation in a venv that sees the system's setuptools and wheel."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from conftest import ROOT

WHEELS = "/usr/share/python-wheels"
PY = "/usr/bin/python3"


def _clean_env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(PIP_NO_INPUT="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_CONFIG_FILE=os.devnull)
    return env


def _venv(path: str, *flags: str) -> str:
    try:
        subprocess.run([PY, "-m", "venv", *flags, path], check=True, capture_output=True)
    except subprocess.CalledProcessError as e:
        pytest.skip("no venv module (apt-get install python3-venv): %s" % e.stderr[-200:])
    return os.path.join(path, "bin")


def _installed_and_typed(bindir: str, cwd: str) -> None:
    """Imported from the venv, typed, and finding the library by its soname
    where the loader looks (here LD_LIBRARY_PATH, as after make install)."""
    libdir = os.path.join(cwd, "lib")
    os.mkdir(libdir)
    shutil.copy(os.environ["OWSANDBOX_LIB"], os.path.join(libdir, "libowsandbox.so.0.2"))
    env = {k: v for k, v in os.environ.items() if k != "OWSANDBOX_LIB"}
    env["LD_LIBRARY_PATH"] = libdir
    probe = ("import owsandbox, os, importlib.resources as r;"
             "print(os.path.dirname(owsandbox.__file__));"
             "print(r.files('owsandbox').joinpath('py.typed').is_file());"
             "print(owsandbox.library_path(), owsandbox.library_version())")
    r = subprocess.run([os.path.join(bindir, "python"), "-c", probe], cwd=cwd, env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    where, typed, path, version = r.stdout.split()
    assert where.startswith(os.path.dirname(bindir)), "imported from the venv, not the checkout"
    assert typed == "True"
    assert (path, version) == ("libowsandbox.so.0.2", "0.2.0")


@pytest.mark.parametrize("how", ["isolated", "no-build-isolation"])
def test_pip_installs_offline_into_a_venv(tmp_path: object, how: str) -> None:
    if how == "isolated":
        have = os.listdir(WHEELS) if os.path.isdir(WHEELS) else []
        if not any(w.startswith("wheel-") for w in have):
            pytest.skip("no wheel in %s (apt-get install python3-wheel-whl)" % WHEELS)
        bindir = _venv(os.path.join(str(tmp_path), "venv"))
        flags = ["--find-links", WHEELS]
    else:
        bindir = _venv(os.path.join(str(tmp_path), "venv"), "--system-site-packages")
        flags = ["--no-build-isolation"]
    # pip builds in the source folder (build/, *.egg-info): a copy keeps the checkout clean
    src = os.path.join(str(tmp_path), "src")
    shutil.copytree(os.path.join(ROOT, "examples", "python"), src,
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    r = subprocess.run([os.path.join(bindir, "pip"), "install", "--no-index", "--no-cache-dir",
                        *flags, src],
                       capture_output=True, text=True, env=_clean_env())
    assert r.returncode == 0, r.stdout + r.stderr
    _installed_and_typed(bindir, str(tmp_path))
