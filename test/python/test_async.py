"""run_async: several commands at once on one event loop, each with its own
timeout; a cancelled task kills its command."""
from __future__ import annotations

import asyncio
import secrets

import pytest

import owsandbox
from conftest import poll, procs_with
from test_run import DAEMONS, rendezvous


def test_concurrent_run_async(session: owsandbox.Session, folder: str) -> None:
    async def main() -> list:
        calls = [session.run_async(rendezvous(folder, "a%d" % i, 5), timeout=60)
                 for i in range(5)]
        return await asyncio.gather(*calls)
    results = asyncio.run(main())
    assert [r.text for r in results] == ["a%d\n" % i for i in range(5)], \
        "the five calls did not run at once on the loop"
    assert all(r.ok and r.enforcement == "full" and r.blocked == [] for r in results)


def test_run_async_captures_input_env_and_status(session: owsandbox.Session) -> None:
    async def main() -> owsandbox.RunResult:
        return await session.run_async(
            ["sh", "-c", 'cat; echo "$OWSTEST_V" >&2; exit 3'], input=b"x" * 200000,
            env={"OWSTEST_V": "v"}, timeout=60)
    r = asyncio.run(main())
    assert r.returncode == 3 and not r.timed_out
    assert r.stdout == b"x" * 200000, "input larger than a pipe's buffer went through"
    assert r.stderr == b"v\n"


def test_run_async_caps_output(session: owsandbox.Session) -> None:
    r = asyncio.run(session.run_async(["head", "-c", "500000", "/dev/zero"],
                                      output_limit=4096, timeout=60))
    assert r.ok and r.stdout == b"\0" * 4096 and r.stdout_truncated


def test_run_async_timeout_is_per_call(session: owsandbox.Session) -> None:
    async def main() -> list:
        return await asyncio.gather(
            session.run_async(["sh", "-c", "echo slow; exec sleep 300"], timeout=0.5),
            session.run_async(["sh", "-c", "sleep 1; echo quick"], timeout=60))
    slow, quick = asyncio.run(main())
    assert slow.timed_out and slow.returncode == -9 and slow.stdout == b"slow\n"
    assert quick.ok and not quick.timed_out and quick.text == "quick\n"


def test_run_async_timeout_kills_a_double_forked_daemon(session: owsandbox.Session) -> None:
    token = "owstest-daemon-" + secrets.token_hex(4)
    r = asyncio.run(session.run_async(
        ["sh", "-c", DAEMONS["double-fork"] % token + "echo forked; exec sleep 300"],
        timeout=2))
    assert r.timed_out and r.stdout == b"forked\n"
    assert poll(lambda: not procs_with(token)), "the daemon outlived the call's timeout"


def test_cancelled_task_kills_its_command(session: owsandbox.Session) -> None:
    token = "owstest-cancel-" + secrets.token_hex(4)

    async def main() -> None:
        task = asyncio.ensure_future(
            session.run_async(["sh", "-c", "sleep 300; : %s" % token]))
        for _ in range(600):  # bounded: until the command is there
            if procs_with(token):
                break
            await asyncio.sleep(0.05)
        assert procs_with(token), "the command never started"
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    asyncio.run(main())
    assert poll(lambda: not procs_with(token)), "the cancelled task's command runs on"
    assert session.run(["true"], timeout=30).ok, "the session goes on"


def test_run_async_spawn_failure(session: owsandbox.Session) -> None:
    with pytest.raises(owsandbox.Error) as e:
        asyncio.run(session.run_async(["/nonexistent/owstest-command"]))
    assert e.value.code == owsandbox.Code.ESPAWN


def test_session_closed_under_a_waiting_task(folder: str) -> None:
    """A close while a task waits: the task returns what its command wrote
    (killed: -9), as a call in a thread does."""
    from conftest import open_session
    s = open_session(folders=[{"path": folder, "access": "rw"}])

    async def main() -> None:
        seen = asyncio.Event()
        task = asyncio.ensure_future(s.run_async(["sh", "-c", "echo partial; exec sleep 300"],
                                                 on_output=lambda _s, _d: seen.set()))
        await asyncio.wait_for(seen.wait(), 60)
        s.close()
        r = await asyncio.wait_for(task, 60)
        assert r.stdout == b"partial\n" and r.returncode == -9 and r.exit_status == 137, r
    asyncio.run(main())
    assert s.closed


def test_run_async_streams(session: owsandbox.Session) -> None:
    seen = [b"", b"", b""]

    def sink(stream: int, data: bytes) -> None:
        seen[stream] += data
    r = asyncio.run(session.run_async(["sh", "-c", "echo one; echo two >&2; echo three"],
                                      on_output=sink, timeout=30))
    assert seen[1] == r.stdout == b"one\nthree\n"
    assert seen[2] == r.stderr == b"two\n"
