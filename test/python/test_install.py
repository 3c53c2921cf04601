"""The package installs offline into a venv, nothing to compile, the py.typed
marker with it, and finds the library.

The wheel (`make wheel`, the README's recipe): built with no setuptools, tagged
for what its library needs, it installs with `pip install` into a venv of a
Python that is not Debian's (pyenv's, when this machine has one: Debian's
setuptools broke that Python's source build) and imports and runs a session
with no OWSANDBOX_LIB, its own library and the libraries that needs, all from
the venv; a user who cannot write the checkout installs it too.

From the source folder, two ways, both with no network: build isolation fed
from Debian's wheels (python3-setuptools-whl, python3-wheel-whl in
/usr/share/python-wheels), and --no-build-isolation in a venv that sees the
system's setuptools and wheel."""
from __future__ import annotations

import base64
import glob
import hashlib
import os
import platform
import re
import shutil
import subprocess
import tempfile
import zipfile
from typing import Iterator

import pytest

from conftest import ROOT

WHEELS = "/usr/share/python-wheels"
PY = "/usr/bin/python3"


@pytest.fixture(autouse=True)
def _tmpdir_of_its_own(tmp_path_factory: pytest.TempPathFactory,
                       monkeypatch: pytest.MonkeyPatch) -> None:
    """What venv and pip leave in TMPDIR goes with the test's folder: ensurepip's pip
    (an older vendored certifi) extracts cacert.pem there and never removes it."""
    monkeypatch.setenv("TMPDIR", str(tmp_path_factory.mktemp("tmpdir")))


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



# ---------------------------------------------------------------- the wheel

PYENV_GLOB = "/root/.pyenv/versions/3.*/bin/python3"
NOBODY = 65534
# The libraries a wheel may leave to the system (scripts/make-wheel.py's list).
C_LIBRARY = re.compile(r"^(libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|"
                       r"libgcc_s\.so\.1|ld-linux-[\w-]+\.so\.\d|linux-vdso\.so\.1)$")


def _other_pythons() -> "list[str]":
    """CPythons 3.9+ that are not Debian's: OWSTEST_OTHER_PYTHON, else pyenv's
    under root's home: the oldest, the newest and 3.11 (the issue's 3.11.7),
    as a venv and a pip install cost some 20 s each on a busy machine."""
    env = os.environ.get("OWSTEST_OTHER_PYTHON")
    found = [env] if env else glob.glob(PYENV_GLOB)

    def version(py: str) -> "tuple[int, ...]":
        m = re.search(r"/(\d+)\.(\d+)\.(\d+)/bin/", py)
        return tuple(int(x) for x in m.groups()) if m else (3, 99, 0)
    ok = sorted((p for p in found if os.access(p, os.X_OK) and version(p) >= (3, 9, 0)),
                key=version)
    pick = ok[:1] + [p for p in ok[1:-1] if version(p)[:2] == (3, 11)] + ok[1:][-1:]
    return pick or ["none"]


@pytest.fixture(scope="module")
def wheel() -> Iterator[str]:
    """`make wheel` into a folder of root's that others may read and not write,
    as a checkout's dist/ is to a user who did not clone it."""
    if not shutil.which("make") or not shutil.which("cc"):
        pytest.skip("no make or cc to build the wheel")
    dist = tempfile.mkdtemp(prefix="owstest-wheel.")
    try:
        os.chmod(dist, 0o755)
        r = subprocess.run(["make", "-s", "-C", ROOT, "wheel", "DIST=" + dist],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
        made = glob.glob(os.path.join(dist, "owsandbox-*.whl"))
        assert len(made) == 1, made
        yield made[0]
    finally:
        shutil.rmtree(dist, ignore_errors=True)


def _glibc() -> "tuple[int, int]":
    major, minor = platform.libc_ver()[1].split(".")[:2]
    return int(major), int(minor)


def test_wheel_is_whole_and_tagged_for_what_it_needs(wheel: str, tmp_path: object) -> None:
    """Every file listed in RECORD with its hash, the library and what it needs
    inside, nothing from the system but the C library, and a tag that says so."""
    name = os.path.basename(wheel)
    m = re.match(r"^owsandbox-0\.2\.0-py3-none-manylinux_(\d+)_(\d+)_(\w+)\.whl$", name)
    assert m, "a pure-ctypes wheel, manylinux for its C library: %s" % name
    assert (int(m.group(1)), int(m.group(2))) <= _glibc(), "needs no newer glibc than here"
    assert m.group(3) == platform.machine()
    out = os.path.join(str(tmp_path), "x")
    with zipfile.ZipFile(wheel) as z:
        record = z.read("owsandbox-0.2.0.dist-info/RECORD").decode().splitlines()
        listed = {line.split(",")[0] for line in record}
        assert listed == set(z.namelist()), "RECORD lists the wheel's files, all of them"
        for line in record:
            path, digest, size = line.rsplit(",", 2)
            if digest:
                data = z.read(path)
                want = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
                assert (digest, int(size)) == ("sha256=" + want.decode(), len(data)), path
        wheel_file = z.read("owsandbox-0.2.0.dist-info/WHEEL").decode()
        meta = z.read("owsandbox-0.2.0.dist-info/METADATA").decode()
        z.extractall(out)
    assert "Tag: py3-none-manylinux_%s_%s_%s\n" % m.groups() in wheel_file
    assert "Root-Is-Purelib: false" in wheel_file
    assert "Requires-Python: >=3.9" in meta
    pkg = os.path.join(out, "owsandbox")
    assert os.path.isfile(os.path.join(pkg, "py.typed"))
    # ldd of the extracted copy, the system's loader path alone: all but the C library
    # resolves into the wheel (RUNPATH $ORIGIN).
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    r = subprocess.run(["ldd", os.path.join(pkg, "libowsandbox.so.0.2")], env=env,
                       capture_output=True, text=True, check=True)
    deps = re.findall(r"^\s*(\S+)(?:\s+=>\s+(\S+))?", r.stdout, re.M)
    outside = [(n, p) for n, p in deps if not C_LIBRARY.match(os.path.basename(n)) and
               not (p or "").startswith(pkg + "/")]
    assert not outside, r.stdout
    assert any(n.startswith("libjansson") for n, _ in deps), r.stdout


def _probe(python: str, cwd: str, user: bool = False) -> "list[str]":
    """Imports the installed package with no OWSANDBOX_LIB and no
    LD_LIBRARY_PATH, from a folder that is not the checkout: where it came
    from, the library it loaded and its version, where the loader took
    jansson from; as root, a command in a session too."""
    code = (
        "import owsandbox, os, importlib.resources as r\n"
        "print(os.path.dirname(owsandbox.__file__))\n"
        "print(r.files('owsandbox').joinpath('py.typed').is_file())\n"
        "print(owsandbox.library_path()); print(owsandbox.library_version())\n"
        "maps = open('/proc/self/maps').read().split()\n"
        "print([p for p in maps if 'libjansson' in p][0])\n"
        "if os.geteuid() == 0:\n"
        "    with owsandbox.Session() as s:\n"
        "        print(s.run(['id', '-u']).stdout.decode().strip())\n")
    env = {k: v for k, v in _clean_env().items() if k not in ("OWSANDBOX_LIB", "LD_LIBRARY_PATH")}
    env["HOME"] = cwd
    if user:
        env["TMPDIR"] = cwd
    r = subprocess.run([python, "-c", code], cwd=cwd, env=env, capture_output=True, text=True,
                       **_as_nobody(user))
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def _as_nobody(user: bool) -> dict:
    return {"user": NOBODY, "group": NOBODY, "extra_groups": []} if user else {}


def _pip_install(venv: str, wheel: str, user: bool = False) -> None:
    env = _clean_env()
    env["HOME"] = os.path.dirname(venv)
    if user:  # the test's TMPDIR is root's: nobody's own folder instead
        env["TMPDIR"] = os.path.dirname(venv)
    r = subprocess.run([os.path.join(venv, "bin", "python"), "-m", "pip", "install",
                        "--no-index", "--no-cache-dir", wheel],
                       capture_output=True, text=True, env=env, cwd=os.path.dirname(venv),
                       **_as_nobody(user))
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("python", _other_pythons())
def test_wheel_installs_into_a_venv_of_another_python(wheel: str, tmp_path: object,
                                                      python: str) -> None:
    if python == "none":
        pytest.skip("no CPython 3.9+ but Debian's here (pyenv's: %s, or OWSTEST_OTHER_PYTHON)"
                    % PYENV_GLOB)
    r = subprocess.run([python, "-c", "import sys; print(sys.version.split()[0], sys.prefix)"],
                       capture_output=True, text=True, check=True)
    prefix = r.stdout.split()[1]
    assert not prefix.startswith("/usr"), "not Debian's Python: %s" % prefix
    venv = os.path.join(str(tmp_path), "venv")
    subprocess.run([python, "-m", "venv", venv], check=True, capture_output=True)
    _pip_install(venv, wheel)
    where, typed, path, libversion, jansson, uid = _probe(os.path.join(venv, "bin", "python"),
                                                          str(tmp_path))
    site = os.path.join(venv, "lib")
    assert where.startswith(site), "imported from the venv, not the checkout"
    assert typed == "True"
    assert path == os.path.join(where, "libowsandbox.so.0.2"), "the wheel's own library"
    assert os.path.dirname(jansson) == where, "what the library needs, from the wheel too"
    assert (libversion, uid) == ("0.2.0", str(NOBODY)), "a session runs the command as nobody"


def test_wheel_installs_for_a_user_who_cannot_write_the_checkout(wheel: str) -> None:
    """nobody, with a venv of its own (Debian's Python: pyenv's under /root is
    closed to it), installs the wheel from root's read-only folder."""
    if subprocess.run(["test", "-w", ROOT], **_as_nobody(True)).returncode == 0:
        pytest.skip("nobody can write the checkout here")
    assert subprocess.run(["test", "-w", os.path.dirname(wheel)],
                          **_as_nobody(True)).returncode != 0
    home = tempfile.mkdtemp(prefix="owstest-wheel-user.")
    try:
        os.chmod(home, 0o700)
        os.chown(home, NOBODY, NOBODY)
        venv = os.path.join(home, "venv")
        r = subprocess.run([PY, "-m", "venv", venv], capture_output=True, text=True,
                           cwd=home, env=dict(os.environ, TMPDIR=home), **_as_nobody(True))
        if r.returncode != 0:
            pytest.skip("no venv module (apt-get install python3-venv): %s" % r.stderr[-200:])
        _pip_install(venv, wheel, user=True)
        where, typed, path, libversion, jansson = _probe(os.path.join(venv, "bin", "python"),
                                                         home, user=True)
        assert where.startswith(venv) and typed == "True"
        assert path == os.path.join(where, "libowsandbox.so.0.2")
        assert os.path.dirname(jansson) == where and libversion == "0.2.0"
    finally:
        shutil.rmtree(home, ignore_errors=True)
