"""Where the package looks for the library on Windows (os.name "nt"): the
checkout's build/win/owsandbox.dll, then owsandbox.dll by name.  Run on Linux
with os.name set to "nt" while the module is loaded afresh; loading the DLL
itself is test/win/dll.c's, under Wine (no Windows Python here)."""
from __future__ import annotations

import importlib.util
import os
from types import ModuleType

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
NATIVE = os.path.join(ROOT, "examples", "python", "owsandbox", "_native.py")


def _load_as(osname: str) -> ModuleType:
    """The module as loaded where os.name is osname; os.name is put back at once
    (pytest's own paths need the real one)."""
    spec = importlib.util.spec_from_file_location("owstest_native_" + osname, NATIVE)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    real = os.name
    os.name = osname
    try:
        spec.loader.exec_module(mod)
    finally:
        os.name = real
    return mod


def test_windows_looks_for_the_dll(monkeypatch: pytest.MonkeyPatch) -> None:
    mod = _load_as("nt")
    assert mod.BUILT == os.path.join("build", "win", "owsandbox.dll")
    assert mod.SYSTEM_NAME == "owsandbox.dll"
    monkeypatch.delenv("OWSANDBOX_LIB", raising=False)
    found = mod._candidates()
    built = os.path.join(ROOT, "build", "win", "owsandbox.dll")
    if os.path.isfile(built):
        assert found[0] == built
    assert "owsandbox.dll" in found
    assert not any(f.endswith(".so") or ".so." in f for f in found)


def test_linux_still_looks_for_the_so(monkeypatch: pytest.MonkeyPatch) -> None:
    mod = _load_as("posix")
    assert mod.BUILT == "libowsandbox.so"
    assert mod.SYSTEM_NAME == mod.SONAME
    monkeypatch.delenv("OWSANDBOX_LIB", raising=False)
    assert mod.SONAME in mod._candidates()
