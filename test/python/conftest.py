"""Fixtures for the Python package's tests: the package from the checkout,
the library of the build tree, throwaway folders the sandbox's account can
use, a local web server, and the processes of a test's commands.

Run as root with the landlock provider (test/sh/python_package.sh does, from
`make check`); a root host runs commands as nobody.  Where the kernel cannot
build a wall a test asks for, the test is skipped with the library's reason.
When OWSTEST_TAP names a file, the results are also written there as TAP for
test/run.sh."""
from __future__ import annotations

import http.server
import os
import pwd
import secrets
import shutil
import sys
import threading
from typing import Any, Callable, Dict, Iterator, List

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "examples", "python"))
os.environ.setdefault("OWSANDBOX_LIB", os.path.join(ROOT, "libowsandbox.so"))

import owsandbox  # noqa: E402

# The account commands run as under a root host (the policy's run_as).
RUN_AS = "nobody"


def _account() -> "tuple[int, int]":
    if os.geteuid() != 0:
        return os.getuid(), os.getgid()
    pw = pwd.getpwnam(RUN_AS)
    return pw.pw_uid, pw.pw_gid


@pytest.fixture
def folder(tmp_path: Any) -> Iterator[str]:
    """A folder to share read-write, owned by the account commands run as."""
    d = str(tmp_path / "work")
    os.mkdir(d)
    uid, gid = _account()
    os.chown(d, uid, gid)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def open_session(events_path: Any = None, on_event: Any = None,
                 **policy: Any) -> owsandbox.Session:
    """A session, or the test skipped with the library's reason where this
    kernel cannot enforce what it asks (OWS_EUNSUPPORTED)."""
    policy.setdefault("provider", "landlock")
    if os.geteuid() == 0:
        policy.setdefault("run_as", RUN_AS)
    try:
        return owsandbox.Session(policy, events_path=events_path, on_event=on_event)
    except owsandbox.Error as e:
        if e.code == owsandbox.Code.EUNSUPPORTED:
            pytest.skip("this machine cannot enforce it: %s" % e)
        raise


@pytest.fixture
def session(folder: str) -> Iterator[owsandbox.Session]:
    with open_session(folders=[{"path": folder, "access": "rw"}]) as s:
        yield s


@pytest.fixture
def allowlist(folder: str) -> Iterator[owsandbox.Session]:
    with open_session(folders=[{"path": folder, "access": "rw"}], network="allowlist") as s:
        yield s


class Web:
    """An HTTP server on 127.0.0.1 answering every GET with its token."""

    def __init__(self) -> None:
        self.token = "owstest-web-" + secrets.token_hex(4)
        body = (self.token + "\n").encode()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.fixture
def web() -> Iterator[Web]:
    w = Web()
    yield w
    w.close()


def procs_with(token: str) -> List[int]:
    """Pids of live processes whose command line holds token (any namespace:
    the host's /proc sees the sandbox's processes too)."""
    found = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % p, "rb") as f:
                cmd = f.read()
            with open("/proc/%s/stat" % p) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if token.encode() in cmd and state not in ("Z", "X"):
            found.append(int(p))
    return found


def poll(cond: Callable[[], bool], seconds: float = 10.0) -> bool:
    """cond() every 50 ms until true or the deadline: bounded, never a fixed wait."""
    import time
    end = time.monotonic() + seconds
    while True:
        if cond():
            return True
        if time.monotonic() >= end:
            return False
        time.sleep(0.05)


# ------------------------------------------------------------------- TAP

_results: List[Dict[str, Any]] = []


def pytest_runtest_logreport(report: Any) -> None:
    if report.when == "call" or (report.when == "setup" and not report.passed):
        reason = ""
        if getattr(report, "wasxfail", None):
            reason = "expected to fail: " + report.wasxfail
        elif report.skipped and isinstance(report.longrepr, tuple):
            reason = str(report.longrepr[2]).replace("Skipped: ", "")
        _results.append({"name": report.nodeid.split("::", 1)[-1], "outcome": report.outcome,
                         "reason": reason, "text": str(report.longrepr or "")})
    elif report.when == "teardown" and report.failed:
        _results.append({"name": report.nodeid.split("::", 1)[-1] + " (teardown)",
                         "outcome": "failed", "reason": "", "text": str(report.longrepr)})


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    path = os.environ.get("OWSTEST_TAP")
    if not path:
        return
    with open(path, "w") as f:
        for n, r in enumerate(_results, 1):
            if r["outcome"] == "passed":
                f.write("ok %d - %s\n" % (n, r["name"]))
            elif r["outcome"] == "skipped":
                f.write("ok %d # SKIP %s: %s\n" % (n, r["name"], r["reason"]))
            else:
                f.write("not ok %d - %s\n" % (n, r["name"]))
                for line in r["text"].splitlines()[-30:]:
                    f.write("# %s\n" % line)
        f.write("1..%d\n" % len(_results))
