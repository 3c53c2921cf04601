"""The allow list from Python: refused, allowed at once, taken back; the
host's own check of a site; the list with where each entry came from; the
sites refused to each call, not to the calls beside it."""
from __future__ import annotations

import asyncio
import secrets
import shutil
import threading
from typing import Dict, Tuple

import pytest

import owsandbox
from conftest import Web

pytestmark = pytest.mark.skipif(shutil.which("curl") is None,
                                reason="needs curl (apt-get install curl)")


def curl(url: str) -> list:
    return ["curl", "-s", "-m", "10", "-w", "\\n%{http_code}", url]


def test_refuse_then_allow_then_succeed(allowlist: owsandbox.Session, web: Web) -> None:
    site = "localhost:%d" % web.port
    url = "http://%s/" % site
    r = allowlist.run(curl(url), timeout=60)
    assert r.text.endswith("\n403"), r
    assert [(b.host, b.port, b.allow) for b in r.blocked] == [("localhost", web.port, site)]
    assert any(b.host == "localhost" and b.port == web.port for b in allowlist.blocked())

    check = allowlist.check_site("localhost", web.port)
    assert not check and check.reason == "not listed" and check.allow == site

    allowlist.allow_site(site)
    check = allowlist.check_site("localhost", web.port)
    assert check and check.pattern == site
    assert owsandbox.Site(site, "session") in allowlist.sites()
    r = allowlist.run(curl(url), timeout=60)
    assert r.text == "%s\n\n200" % web.token, r
    assert r.blocked == []

    allowlist.remove_site(site)
    assert not allowlist.check_site("localhost", web.port)
    assert owsandbox.Site(site, "session") not in allowlist.sites()
    assert allowlist.run(curl(url), timeout=60).text.endswith("\n403")


def test_sites_name_their_source(folder: str) -> None:
    from conftest import open_session
    with open_session(folders=[{"path": folder, "access": "rw"}], network="allowlist",
                      hosts=["owstest-policy.example:443"]) as s:
        s.allow_site("owstest-session.example:8443")
        sites = s.sites()
        assert owsandbox.Site("owstest-policy.example:443", "policy") in sites
        assert owsandbox.Site("owstest-session.example:8443", "session") in sites


def test_check_site_outside_allowlist(session: owsandbox.Session) -> None:
    c = session.check_site("example.com", 443)
    assert not c.allowed and c.reason == "network none"
    with pytest.raises(ValueError):
        session.check_site("example.com", 0)


def _blocked_pair(s: owsandbox.Session, use_async: bool) -> Tuple[str, owsandbox.RunResult,
                                                                   owsandbox.RunResult]:
    """Two calls that overlap: one asks for an unlisted site while the other,
    quiet, waits until it has (so that the refusal falls in its time too)."""
    host = "owstest-blocked-%s.invalid" % secrets.token_hex(3)
    loud = ["sh", "-c", 'touch arrived.loud; while [ ! -e arrived.quiet ]; do sleep 0.05; done; '
            'curl -s -m 10 -o /dev/null http://%s/; touch done.loud' % host]
    quiet = ["sh", "-c", 'touch arrived.quiet; n=0; while [ ! -e done.loud ]; do '
             'n=$((n+1)); [ "$n" -gt 600 ] && exit 9; sleep 0.05; done; echo quiet']
    out: Dict[str, owsandbox.RunResult] = {}
    if use_async:
        async def main() -> None:
            out["loud"], out["quiet"] = await asyncio.gather(
                s.run_async(loud, timeout=60), s.run_async(quiet, timeout=60))
        asyncio.run(main())
    else:
        t = threading.Thread(target=lambda: out.__setitem__("loud", s.run(loud, timeout=60)))
        t.start()
        out["quiet"] = s.run(quiet, timeout=60)
        t.join()
    return host, out["loud"], out["quiet"]


@pytest.mark.parametrize("use_async", [False, True], ids=["threads", "asyncio"])
def test_blocked_sites_belong_to_the_call(allowlist: owsandbox.Session, use_async: bool) -> None:
    host, loud, quiet = _blocked_pair(allowlist, use_async)
    assert quiet.ok and quiet.text == "quiet\n", quiet
    assert [b.host for b in loud.blocked] == [host]
    assert quiet.blocked == [], "a quiet call was told the other call's blocked site"
    assert host in [b.host for b in allowlist.blocked()]
