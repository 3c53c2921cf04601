"""What a host bug gets: a clear Python error, never a crash.  A closed
session refuses every call; a NUL in a string is refused as subprocess
refuses it; the C calls take NULL without crashing."""
from __future__ import annotations

import asyncio
import ctypes
import subprocess
import threading

import pytest

import owsandbox
from owsandbox import _native
from conftest import open_session, poll


def _closed(folder: str) -> owsandbox.Session:
    s = open_session(folders=[{"path": folder, "access": "rw"}])
    s.close()
    return s


CALLS = {
    "run": lambda s: s.run(["true"]),
    "run_async": lambda s: asyncio.run(s.run_async(["true"])),
    "allow_site": lambda s: s.allow_site("example.com:443"),
    "remove_site": lambda s: s.remove_site("example.com:443"),
    "blocked": lambda s: s.blocked(),
    "check_site": lambda s: s.check_site("example.com", 443),
    "sites": lambda s: s.sites(),
}


@pytest.mark.parametrize("call", sorted(CALLS))
def test_closed_session_refuses(folder: str, call: str) -> None:
    s = _closed(folder)
    with pytest.raises(owsandbox.Error) as e:
        CALLS[call](s)
    assert e.value.code == owsandbox.Code.ESTATE and e.value.name == "OWS_ESTATE"
    assert "closed" in e.value.what and e.value.hint


def test_close_twice_and_with_block(folder: str) -> None:
    s = _closed(folder)
    s.close()  # a second close does nothing, as a file's
    assert s.closed and "closed" in repr(s)
    with open_session(folders=[{"path": folder, "access": "rw"}]) as t:
        assert not t.closed
    assert t.closed


def test_close_ends_a_call_in_another_thread(folder: str) -> None:
    """Closing ends every command of the session, also one another thread
    waits on with no timeout: that call returns (killed, or ESTATE), and the
    close does not wait for it to finish on its own."""
    s = open_session(folders=[{"path": folder, "access": "rw"}])
    got: list = []

    def call() -> None:
        try:
            got.append(s.run(["sh", "-c", "sleep 600; echo done"]))
        except owsandbox.Error as e:
            got.append(e)
    t = threading.Thread(target=call)
    t.start()
    assert poll(lambda: s._h.calls > 0 or not t.is_alive()), "the call never started"
    s.close()
    t.join(60)
    assert not t.is_alive(), "the call in flight outlived the close"
    assert got, "the call returned nothing"
    r = got[0]
    if isinstance(r, owsandbox.Error):
        assert r.name == "OWS_ESTATE", r
    else:
        assert r.returncode == -9 and r.exit_status == 137 and "done" not in r.text, r


def test_nul_refused_as_subprocess_refuses(session: owsandbox.Session) -> None:
    with pytest.raises(ValueError) as sub:
        subprocess.run(["echo", "a\0b"])
    for bad in (lambda: session.run(["echo", "a\0b"]),
                lambda: session.run([b"echo\0"]),
                lambda: asyncio.run(session.run_async(["echo", "a\0b"])),
                lambda: session.run(["echo"], env={"A": "x\0y"}),
                lambda: session.run(["echo"], env={"A\0B": "x"}),
                lambda: session.run(["echo"], cwd="/tmp\0/x"),
                lambda: session.allow_site("example.com\0evil.com"),
                lambda: session.check_site("example.com\0evil.com", 443)):
        with pytest.raises(ValueError) as e:
            bad()
        assert str(e.value) == str(sub.value) == "embedded null byte"
    with pytest.raises(ValueError, match="illegal environment variable name"):
        session.run(["echo"], env={"A=B": "x"})
    with pytest.raises(ValueError):
        session.run([])
    with pytest.raises(TypeError):
        session.run([1])  # type: ignore[list-item]
    with pytest.raises(ValueError):
        session.run(["true"], timeout=0)


def test_policy_errors_carry_what_where_hint(folder: str) -> None:
    with pytest.raises(owsandbox.Error) as e:
        owsandbox.Session(folders=[{"path": "relative/dir", "access": "rw"}])
    assert e.value.code == owsandbox.Code.EINVAL
    assert e.value.where == "relative/dir" and e.value.hint
    with pytest.raises(owsandbox.Error) as e:
        owsandbox.Session({"owstest_unknown_key": 1})
    assert "owstest_unknown_key" in str(e.value)


def test_c_calls_take_null(session: owsandbox.Session) -> None:
    L = _native.lib()
    err = _native._Err()
    assert L.fn("ows_session_close")(None, ctypes.byref(err)) == 0
    assert L.fn("ows_proc_fd")(None) == -1
    res = ctypes.POINTER(_native.RunResultStruct)()
    argv = (ctypes.c_char_p * 2)(b"true", None)
    rc = L.fn("ows_session_run")(None, argv, None, ctypes.byref(res), ctypes.byref(err))
    assert rc == owsandbox.Code.EINVAL and not res
    out = ctypes.c_void_p()
    for name in ("ows_session_sites_json", "ows_session_blocked_json"):
        args = (None, 0, ctypes.byref(out)) if "blocked" in name else (None, ctypes.byref(out))
        assert L.fn(name)(*args, ctypes.byref(_native._Err())) < 0
