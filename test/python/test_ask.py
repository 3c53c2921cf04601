"""The ask hook from Python (Session.set_ask): a command's request to a site
the session does not list is held while the handler decides; a thread form
and an asyncio form; yes, no, an exception, no answer in time, four asks at
once, a denied site never asked, and the session closed while one waits."""
from __future__ import annotations

import asyncio
import shutil
import threading
import time
from typing import Any, List, Tuple

import pytest

import owsandbox
from conftest import Web, open_session

pytestmark = pytest.mark.skipif(shutil.which("curl") is None,
                                reason="needs curl (apt-get install curl)")


def curl(url: str) -> list:
    return ["curl", "-s", "-m", "30", "-w", "\\n%{http_code}", url]


def url_of(web: Web) -> str:
    return "http://127.0.0.1:%d/" % web.port  # not listed: asked


def test_thread_yes_and_no(allowlist: owsandbox.Session, web: Web) -> None:
    seen: List[Tuple[str, int, str]] = []
    answer = {"allow": True}

    def handler(host: str, port: int) -> bool:
        seen.append((host, port, threading.current_thread().name))
        time.sleep(0.2)  # the person thinks; the proxy's thread is not held
        return answer["allow"]

    allowlist.set_ask(handler)
    r = allowlist.run(curl(url_of(web)), timeout=60)
    assert r.text == "%s\n\n200" % web.token, r
    assert r.blocked == []
    assert seen[0][:2] == ("127.0.0.1", web.port)
    assert seen[0][2] != threading.main_thread().name

    answer["allow"] = False
    r = allowlist.run(curl(url_of(web)), timeout=60)
    assert r.text.endswith("\n403"), r
    assert [(b.host, b.port) for b in r.blocked] == [("127.0.0.1", web.port)]


def test_handler_exception_refuses(allowlist: owsandbox.Session, web: Web) -> None:
    def handler(host: str, port: int) -> bool:
        raise RuntimeError("the person's window crashed")

    allowlist.set_ask(handler)
    assert allowlist.run(curl(url_of(web)), timeout=60).text.endswith("\n403")


def test_timeout_refuses(allowlist: owsandbox.Session, web: Web) -> None:
    release = threading.Event()

    def handler(host: str, port: int) -> bool:
        release.wait(20)
        return True

    allowlist.set_ask(handler, timeout=1.5)
    t0 = time.monotonic()
    r = allowlist.run(curl(url_of(web)), timeout=60)
    took = time.monotonic() - t0
    release.set()
    assert r.text.endswith("\n403"), r
    assert 1.4 <= took < 15, took
    assert any(b.host == "127.0.0.1" for b in r.blocked)
    with pytest.raises(ValueError):
        allowlist.set_ask(handler, timeout=0)


def test_concurrent_asks_and_a_deny(folder: str, web: Web) -> None:
    with open_session(folders=[{"path": folder, "access": "rw"}], network="allowlist",
                      hosts=["localhost:%d" % web.port, "!127.0.0.2:*"]) as s:
        asked: List[Tuple[str, int]] = []
        four = threading.Barrier(4, timeout=20)

        def handler(host: str, port: int) -> bool:
            asked.append((host, port))
            four.wait()  # each answers only once all four wait at once
            return True

        s.set_ask(handler)
        script = ("for i in 1 2 3 4; do (curl -s -m 30 -o /dev/null -w '%%{http_code}\\n' %s) & "
                  "done; wait" % url_of(web))
        r = s.run(["sh", "-c", script], timeout=60)
        assert sorted(r.text.split()) == ["200"] * 4, r
        assert len(asked) == 4
        r = s.run(curl("http://127.0.0.2:%d/" % web.port), timeout=60)
        assert r.text.endswith("\n403") and len(asked) == 4, "a denied site is never asked"


def test_asyncio_handler(allowlist: owsandbox.Session, web: Web) -> None:
    async def main() -> Tuple[str, List[Any]]:
        loops: List[Any] = []

        async def handler(host: str, port: int) -> bool:
            loops.append(asyncio.get_running_loop())
            await asyncio.sleep(0.2)
            return port == web.port

        allowlist.set_ask(handler)
        r = await asyncio.get_running_loop().run_in_executor(
            None, lambda: allowlist.run(curl(url_of(web)), timeout=60))
        return r.text, loops

    text, loops = asyncio.run(main())
    assert text == "%s\n\n200" % web.token
    assert len(loops) == 1
    with pytest.raises(ValueError):  # no running loop, none named
        async def h(host: str, port: int) -> bool:
            return True
        allowlist.set_ask(h)


def test_close_while_asking(folder: str, web: Web) -> None:
    s = open_session(folders=[{"path": folder, "access": "rw"}], network="allowlist")
    asked = threading.Event()
    release = threading.Event()
    answers: List[bool] = []

    def handler(host: str, port: int) -> bool:
        asked.set()
        release.wait(20)
        answers.append(True)
        return True

    s.set_ask(handler)
    out: List[Any] = []
    def call() -> None:
        try:
            out.append(s.run(curl(url_of(web)), timeout=60))
        except owsandbox.Error as e:  # the session closed under it
            out.append(e)

    t = threading.Thread(target=call)
    t.start()
    assert asked.wait(20)
    t0 = time.monotonic()
    s.close()
    assert time.monotonic() - t0 < 10
    t.join(20)
    assert not t.is_alive() and out
    release.set()  # the handler answers after the close: nothing breaks
    for _ in range(100):
        if answers:
            break
        time.sleep(0.05)
    assert answers == [True]
