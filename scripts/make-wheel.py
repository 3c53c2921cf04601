#!/usr/bin/env python3
"""Writes the wheel of the Python package (examples/python) with the library in it.

    scripts/make-wheel.py --lib build/wheel/libowsandbox.so.0.2 --out dist

A wheel is a zip: the package's files, then NAME-VERSION.dist-info/ with METADATA,
WHEEL and RECORD (PEP 427, 491).  Writing it here needs no setuptools, no network and no
write access to examples/python, so `make wheel` works from any checkout and
`pip install dist/owsandbox-*.whl` installs with no build step in any CPython 3.9+.

The library goes into the package (owsandbox/libowsandbox.so.0.MINOR, where _native.py
looks first), with the shared libraries it needs beyond the C library copied beside it
under their sonames (the Makefile links it with RUNPATH $ORIGIN), as auditwheel repairs
a wheel.  The tag: py3-none (ctypes, no compiled extension: any CPython 3 ABI) and the
platform manylinux_2_M_ARCH, M the newest glibc symbol version any of the wheel's ELF
files needs, when everything else they need is the C library's own (PEP 600): pip then
refuses it, before anything is installed, on a machine whose glibc is older (pip 20.3 or
later reads the tag: a venv's older pip needs `pip install -U pip` first).  Otherwise
linux_ARCH: this machine's kind only.
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import io
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
import zipfile
from typing import Dict, List, Tuple

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
PKG_SRC = os.path.join(ROOT, "examples", "python")
PKG = "owsandbox"

# What a manylinux wheel may leave to the system (PEP 600 defers to auditwheel's policy):
# the C library's own parts.  Anything else the library needs is bundled.
SYSTEM_LIBS = {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1",
               "libgcc_s.so.1", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1",
               "linux-vdso.so.1"}


def die(msg: str) -> None:
    sys.exit("make-wheel: " + msg)


def project() -> Dict[str, object]:
    """The fields of examples/python/pyproject.toml the metadata needs: a few
    flat keys, read by pattern (tomllib is 3.11+; this must run on 3.9)."""
    with open(os.path.join(PKG_SRC, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    meta: Dict[str, object] = {}
    for key in ("name", "version", "description", "requires-python"):
        m = re.search(r'^%s\s*=\s*"([^"]*)"' % re.escape(key), text, re.M)
        if not m:
            die("examples/python/pyproject.toml has no %s" % key)
        meta[key] = m.group(1)
    m = re.search(r"^classifiers\s*=\s*\[(.*?)\]", text, re.M | re.S)
    meta["classifiers"] = re.findall(r'"([^"]+)"', m.group(1)) if m else []
    return meta


def needed(lib: str) -> List[Tuple[str, str]]:
    """(soname, path) of each shared library LIB loads, as the loader resolves them."""
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    r = subprocess.run(["ldd", lib], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        die("ldd %s: %s" % (lib, r.stderr.strip()))
    out = []
    for line in r.stdout.splitlines():
        m = re.match(r"\s*(\S+)\s+=>\s+(\S+)", line)
        if m:
            if m.group(2) == "not":
                die("%s needs %s, which the loader does not find" % (lib, m.group(1)))
            out.append((m.group(1), m.group(2)))
        else:
            m = re.match(r"\s*(\S+)\s+\(0x", line)
            if m:
                out.append((os.path.basename(m.group(1)), m.group(1)))
    return out


def glibc_needed(path: str) -> Tuple[int, int]:
    """The newest GLIBC_x.y symbol version PATH needs (objdump -T lists them)."""
    r = subprocess.run(["objdump", "-T", path], capture_output=True, text=True)
    if r.returncode != 0:
        die("objdump -T %s (binutils): %s" % (path, r.stderr.strip()))
    found = [(int(a), int(b)) for a, b in re.findall(r"\bGLIBC_(\d+)\.(\d+)", r.stdout)]
    return max(found, default=(2, 17))


def platform_tag(lib: str, bundled: List[Tuple[str, str]], system: List[str]) -> str:
    arch = platform.machine()
    if not all(name in SYSTEM_LIBS for name in system):
        return "linux_" + arch
    major, minor = max(glibc_needed(p) for p in [lib] + [p for _, p in bundled])
    return "manylinux_%d_%d_%s" % (major, max(minor, 17), arch)


def record_hash(data: bytes) -> str:
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def metadata(meta: Dict[str, object]) -> bytes:
    lines = ["Metadata-Version: 2.1", "Name: %s" % meta["name"],
             "Version: %s" % meta["version"], "Summary: %s" % meta["description"],
             "Requires-Python: %s" % meta["requires-python"]]
    lines += ["Classifier: %s" % c for c in meta["classifiers"]]  # type: ignore[union-attr]
    readme = os.path.join(PKG_SRC, "README.md")
    body = ""
    if os.path.isfile(readme):
        lines.append("Description-Content-Type: text/markdown")
        with open(readme, encoding="utf-8") as f:
            body = f.read()
    return ("\n".join(lines) + "\n\n" + body).encode("utf-8")


def package_files() -> List[Tuple[str, str]]:
    """(name in the wheel, path) of the package's own files: its modules and py.typed."""
    src = os.path.join(PKG_SRC, PKG)
    names = sorted(n for n in os.listdir(src) if n.endswith(".py") or n == "py.typed")
    if "__init__.py" not in names:
        die("%s has no __init__.py" % src)
    return [("%s/%s" % (PKG, n), os.path.join(src, n)) for n in names]


def write_wheel(path: str, entries: List[Tuple[str, bytes, int]], dist_info: str) -> None:
    """The zip, in a stable order and with a fixed date (SOURCE_DATE_EPOCH, else
    1980) so that the same inputs make the same bytes; RECORD last."""
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))
    date = time.gmtime(max(epoch, 315532800))[:6]
    record = io.StringIO()
    for name, data, _ in entries:
        record.write("%s,%s,%d\n" % (name, record_hash(data), len(data)))
    record.write("%s/RECORD,,\n" % dist_info)
    entries = entries + [(dist_info + "/RECORD", record.getvalue().encode(), 0o644)]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name, date)
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", required=True, help="the library to carry (make's build/wheel/)")
    ap.add_argument("--out", default=os.path.join(ROOT, "dist"), help="the folder to write to")
    args = ap.parse_args()
    if not os.path.isfile(args.lib):
        die("no library at %s: build it with `make wheel`" % args.lib)
    meta = project()
    soname = os.path.basename(args.lib)
    if not soname.startswith("libowsandbox.so."):
        die("%s is not named by its soname (libowsandbox.so.0.MINOR)" % args.lib)

    libs = needed(args.lib)
    bundled = [(n, p) for n, p in libs if n not in SYSTEM_LIBS]
    # A bundled library's own needs must be the C library's or bundled too.
    names = {n for n, _ in bundled}
    system = [n for n, _ in libs if n in SYSTEM_LIBS]
    for _, p in bundled:
        for n, _ in needed(p):
            if n not in SYSTEM_LIBS and n not in names:
                die("%s needs %s, which %s does not load itself" % (p, n, soname))
    tag = "py3-none-" + platform_tag(args.lib, bundled, system)

    name, version = str(meta["name"]), str(meta["version"])
    dist_info = "%s-%s.dist-info" % (name, version)
    entries: List[Tuple[str, bytes, int]] = []
    for arc, path in package_files():
        with open(path, "rb") as f:
            entries.append((arc, f.read(), 0o644))
    for arc, path in [(soname, args.lib)] + bundled:
        with open(os.path.realpath(path), "rb") as f:
            entries.append(("%s/%s" % (PKG, arc), f.read(), 0o755))
    wheel = ["Wheel-Version: 1.0", "Generator: owsandbox scripts/make-wheel.py",
             "Root-Is-Purelib: false", "Tag: " + tag]
    entries.append((dist_info + "/METADATA", metadata(meta), 0o644))
    entries.append((dist_info + "/WHEEL", ("\n".join(wheel) + "\n").encode(), 0o644))

    os.makedirs(args.out, exist_ok=True)
    filename = "%s-%s-%s.whl" % (name, version, tag)
    # Another tag's wheel of this version would make `pip install dist/owsandbox-*.whl`
    # ambiguous: it goes.
    for old in os.listdir(args.out):
        if old.startswith("%s-%s-" % (name, version)) and old.endswith(".whl") and old != filename:
            os.unlink(os.path.join(args.out, old))
    fd, tmp = tempfile.mkstemp(dir=args.out, prefix=".wheel-")
    os.close(fd)
    try:
        write_wheel(tmp, entries, dist_info)
        os.chmod(tmp, 0o644)
        os.replace(tmp, os.path.join(args.out, filename))
    except BaseException:
        os.unlink(tmp)
        raise
    print("  WHEEL   %s (%s bundled)" % (os.path.join(args.out, filename),
                                         ", ".join(n for n, _ in bundled) or "nothing"))


if __name__ == "__main__":
    main()
