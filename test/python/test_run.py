"""session.run as an agent server calls it: captured output, stdin, cwd and
env, timeouts, a cap on output, calls in sequence and from threads at once."""
from __future__ import annotations

import os
import secrets
import threading
from typing import List

import pytest

import owsandbox
from conftest import poll, procs_with


def test_run_captures_output_and_status(session: owsandbox.Session, folder: str) -> None:
    r = session.run(["sh", "-c", "printf 'out\\000x'; echo err >&2; id -u; exit 7"])
    assert r.returncode == 7
    assert r.stdout.startswith(b"out\x00x"), "bytes come back whole, NULs and all"
    assert r.stderr == b"err\n"
    assert not r.timed_out and not r.stdout_truncated and not r.stderr_truncated
    assert r.enforcement == session.enforcement == "full"
    assert r.blocked == []
    assert r.wall_ms >= 0
    assert not r.ok
    uid = int(r.text.split("x", 1)[1])
    assert uid != 0, "a root host's command does not run as root"


def test_run_input_cwd_env(session: owsandbox.Session, folder: str) -> None:
    sub = os.path.join(folder, "sub")
    os.mkdir(sub)
    os.chown(sub, os.stat(folder).st_uid, os.stat(folder).st_gid)
    r = session.run(["sh", "-c", 'cat; echo "|$PWD|$OWSTEST_NAME"'], input=b"from stdin\n",
                    cwd=sub, env={"OWSTEST_NAME": "value one"})
    assert r.ok, r
    assert r.text == "from stdin\n|%s|value one\n" % sub
    # no input: stdin is /dev/null, so a reader gets EOF at once
    assert session.run(["cat"], timeout=30).stdout == b""
    # a str input is UTF-8
    assert session.run(["cat"], input="é").stdout == "é".encode()


def test_run_secret_env_names_are_dropped(session: owsandbox.Session) -> None:
    r = session.run(["sh", "-c", 'echo "${OWSTEST_TOKEN-unset}"'],
                    env={"OWSTEST_TOKEN": "s3cret"})
    assert r.text == "unset\n"


def test_twenty_calls_in_sequence_with_timeouts(session: owsandbox.Session,
                                                folder: str) -> None:
    for i in range(20):
        r = session.run(["sh", "-c", 'echo "$0" >>calls; wc -l <calls', str(i)], timeout=30)
        assert r.ok, (i, r)
        assert int(r.text) == i + 1
    with open(os.path.join(folder, "calls")) as f:
        assert f.read().split() == [str(i) for i in range(20)]


def test_timeout_kills_and_the_session_goes_on(session: owsandbox.Session) -> None:
    r = session.run(["sh", "-c", "echo started; exec sleep 300"], timeout=0.5)
    assert r.timed_out
    assert r.returncode == -9 and r.exit_status == 128 + 9, "killed: -9 as subprocess says"
    assert r.stdout == b"started\n"
    assert session.run(["true"], timeout=30).ok


DAEMONS = {
    # a double fork: the daemon's parent exits, the daemon stays in the command's group
    "double-fork": '(sh -c "sleep 300; : %s" </dev/null >/dev/null 2>&1 &); ',
    # the classic daemon: its own session too (setsid), out of the command's group
    "setsid": '(setsid sh -c "sleep 300; : %s" </dev/null >/dev/null 2>&1 &); ',
}


def test_timeout_kills_a_double_forked_daemon(session: owsandbox.Session) -> None:
    token = "owstest-daemon-" + secrets.token_hex(4)
    r = session.run(["sh", "-c", DAEMONS["double-fork"] % token + "echo forked; exec sleep 300"],
                    timeout=2)
    assert r.timed_out and r.returncode == -9 and r.exit_status == 128 + 9
    assert r.stdout == b"forked\n"
    assert poll(lambda: not procs_with(token)), "the daemon outlived the call's timeout"


def test_timeout_kills_a_setsid_daemon(session: owsandbox.Session) -> None:
    """The timeout ends all the call started, also a daemon that left its
    process group and session (setsid)."""
    token = "owstest-daemon-" + secrets.token_hex(4)
    r = session.run(["sh", "-c", DAEMONS["setsid"] % token + "echo forked; exec sleep 300"],
                    timeout=2)
    assert r.timed_out and r.stdout == b"forked\n"
    assert poll(lambda: not procs_with(token)), "the setsid daemon outlived the call's timeout"


def test_a_daemon_of_a_call_that_ended_lives_until_the_session_closes(folder: str) -> None:
    """A call that exits leaves its daemons running (a dev server), never
    past the session."""
    from conftest import open_session
    token = "owstest-daemon-" + secrets.token_hex(4)
    with open_session(folders=[{"path": folder, "access": "rw"}]) as s:
        r = s.run(["sh", "-c", DAEMONS["setsid"] % token + "echo forked"], timeout=60)
        assert r.returncode == 0 and not r.timed_out and r.stdout == b"forked\n"
        assert poll(lambda: bool(procs_with(token))), "control: the setsid daemon is running"
    assert poll(lambda: not procs_with(token)), "the daemon outlived its session"


def test_output_is_capped(session: owsandbox.Session) -> None:
    r = session.run(["sh", "-c", "head -c 300000 /dev/zero; head -c 10 /dev/zero >&2"],
                    output_limit=1000, timeout=60)
    assert r.ok
    assert r.stdout == b"\0" * 1000 and r.stdout_truncated
    assert r.stderr == b"\0" * 10 and not r.stderr_truncated


def test_on_output_streams(session: owsandbox.Session) -> None:
    seen: List[bytes] = [b"", b"", b""]

    def sink(stream: int, data: bytes) -> None:
        seen[stream] += data
    r = session.run(["sh", "-c", "echo one; echo two >&2; echo three"], on_output=sink)
    assert seen[1] == r.stdout == b"one\nthree\n"
    assert seen[2] == r.stderr == b"two\n"


def test_a_command_that_cannot_start(session: owsandbox.Session) -> None:
    with pytest.raises(owsandbox.Error) as e:
        session.run(["/nonexistent/owstest-command"])
    assert e.value.code == owsandbox.Code.ESPAWN
    assert e.value.name == "OWS_ESPAWN" and e.value.what and e.value.hint


def rendezvous(folder: str, name: str, count: int) -> List[str]:
    """A command that marks its arrival and waits (bounded, 30 s) until
    `count` commands have arrived: it passes only if they all ran at once."""
    return ["sh", "-c",
            'touch "arrived.$0"; n=0; '
            'while [ "$(ls | grep -c "^arrived\\.")" -lt "$1" ]; do '
            'n=$((n+1)); [ "$n" -gt 600 ] && exit 9; sleep 0.05; done; echo "$0"',
            name, str(count)]


def test_four_threads_at_once_without_a_lock(session: owsandbox.Session,
                                             folder: str) -> None:
    results: dict = {}
    errors: list = []

    def worker(i: int) -> None:
        try:
            # each thread: its rendezvous call, then four more of its own
            results[i] = [session.run(rendezvous(folder, "t%d" % i, 4), timeout=60)]
            for j in range(4):
                results[i].append(session.run(["echo", "%d.%d" % (i, j)], timeout=30))
        except BaseException as e:  # noqa: B902 - reported below
            errors.append(e)
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for i in range(4):
        first, *rest = results[i]
        assert first.ok and first.text == "t%d\n" % i, \
            "the four calls did not run at once: %r" % first
        assert [r.text for r in rest] == ["%d.%d\n" % (i, j) for j in range(4)]


def test_events_reach_the_host(folder: str, tmp_path: object) -> None:
    import json
    from conftest import open_session
    seen: List[dict] = []
    path = os.path.join(str(tmp_path), "events")
    s = open_session(events_path=path, on_event=seen.append,
                     folders=[{"path": folder, "access": "rw"}])
    with s:
        s.run(["true"], timeout=30)
    kinds = [e.get("event") for e in seen]
    assert kinds[0] == "open" and kinds[-1] == "close", kinds
    assert "spawn" in kinds and "exit" in kinds
    with open(path) as f:
        assert [json.loads(line).get("event") for line in f] == kinds


def test_a_config_that_is_not_there(folder: str) -> None:
    with pytest.raises(owsandbox.Error) as e:
        owsandbox.Session(folders=[{"path": folder, "access": "rw"}],
                          config="/nonexistent/owstest-config.ini")
    assert e.value.code == owsandbox.Code.ECONFIG and e.value.hint
