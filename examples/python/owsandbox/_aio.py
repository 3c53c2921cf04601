"""run_async and open_async: nothing of a call blocks the event loop.

What may take a while in the library runs in the loop's default executor:
a session's open and close, a command's spawn (a round trip to the
sandbox's init), the wait that collects its exit (it sweeps the session's
guarded names, under the session's lock) and the freeing of its handle.
The loop itself only waits on descriptors: the process's
own (ows_proc_fd, readable once it has exited, also when the session closed)
and the read ends of its output pipes; stdin is a pipe the loop writes the
input into.  No polling.

Why not ows_session_run in a thread: a task running it could not be
cancelled (the thread holds no handle to kill), and each waiting call would
hold a thread.  Here every call is a proc handle the task owns, so a timeout
or a cancellation kills exactly its command."""
from __future__ import annotations

import asyncio
import functools
from typing import TYPE_CHECKING, Any, List, Mapping, Optional

from ._proc import Capture, Proc, Sink, STDOUT, check_output_options
from ._session import (Argv, Input, RunResult, StrOrBytesPath, _argv, _cwd, _envv,
                       _input_bytes, _timeout_ms)

if TYPE_CHECKING:
    from ._session import Session


class _Call(Proc):
    """A Proc whose waits are the event loop's callbacks."""

    collecting: "Optional[asyncio.Future[Optional[int]]]" = None

    def free_later(self, loop: asyncio.AbstractEventLoop) -> None:
        """Frees the handle in the executor, once no collecting wait uses it."""
        if self.collecting is not None and not self.collecting.done():
            self.collecting.add_done_callback(lambda _f: self.free_later(loop))
            return
        loop.run_in_executor(None, self.free)

    def watch(self, loop: asyncio.AbstractEventLoop, timeout_ms: int) -> None:
        self.loop = loop
        self.exited: "asyncio.Future[int]" = loop.create_future()
        self.timer: Optional[asyncio.TimerHandle] = None
        self.watched: List[int] = []
        self._reader(self.proc_fd, self._on_exit)
        for cap in self.caps:
            self._reader(cap.fd, self._on_output, cap)
        if self.in_w >= 0:
            if self.pending:
                loop.add_writer(self.in_w, self._on_writable)
            else:
                self.close_input()
        if timeout_ms > 0:
            self.timer = loop.call_later(timeout_ms / 1000.0, self._on_timeout)

    def _reader(self, fd: int, fn: Any, *args: Any) -> None:
        self.loop.add_reader(fd, fn, *args)
        self.watched.append(fd)

    def _unwatch(self, fd: int) -> None:
        if fd in self.watched:
            self.loop.remove_reader(fd)
            self.watched.remove(fd)

    def _fail(self, e: BaseException) -> None:
        if not self.exited.done():
            self.exited.set_exception(e)

    def _on_exit(self) -> None:
        """The descriptor is readable: the exit is collected in the executor."""
        self._unwatch(self.proc_fd)
        self.collecting = self.loop.run_in_executor(None, self.poll_exit)
        self.collecting.add_done_callback(self._collected)

    def _collected(self, fut: "asyncio.Future[Optional[int]]") -> None:
        if fut.cancelled() or self.exited.done():
            return
        if fut.exception() is not None:
            self._fail(fut.exception())  # type: ignore[arg-type]
        elif fut.result() is None:  # not yet after all: watched again
            self._reader(self.proc_fd, self._on_exit)
        else:
            self.exited.set_result(fut.result())  # type: ignore[arg-type]

    def _on_output(self, cap: Capture) -> None:
        try:
            cap.read_once()  # on_output runs here, on the loop
        except Exception as e:  # noqa: BLE001 - on_output's: the caller's to see
            cap.eof = True
            self._fail(e)
        if cap.eof:
            self._unwatch(cap.fd)

    def _on_writable(self) -> None:
        if self.write_input():
            self.loop.remove_writer(self.in_w)
            self.close_input()

    def _on_timeout(self) -> None:
        self.timer = None
        self.timed_out = True
        self.kill()

    def unwatch_all(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
        for fd in list(self.watched):
            self._unwatch(fd)
        if self.in_w >= 0:
            self.loop.remove_writer(self.in_w)


def _abandon(call: _Call, spawned: "asyncio.Future[None]") -> None:
    """A task cancelled while its command was being spawned: once the spawn
    is done, the command is killed and its handle freed."""
    if not spawned.cancelled() and spawned.exception() is None:
        call.kill()
    call.free()


async def run_async(session: "Session", argv: Argv, timeout: Optional[float],
                    input: Optional[Input], cwd: Optional[StrOrBytesPath],
                    env: Optional[Mapping[StrOrBytesPath, StrOrBytesPath]],
                    stderr: Optional[int], output_limit: Optional[int], output_keep: str,
                    on_output: Sink) -> RunResult:
    args, envv, cwdb = _argv(argv), _envv(env), _cwd(cwd)
    data, timeout_ms = _input_bytes(input), _timeout_ms(timeout)
    limit = check_output_options(stderr, output_limit, output_keep)
    loop = asyncio.get_running_loop()
    call = _Call(session, limit, output_keep, stderr == STDOUT, on_output)
    spawned = loop.run_in_executor(None, call.spawn, args, envv, cwdb, data,
                                   "Session.run_async")
    try:
        await asyncio.shield(spawned)
    except asyncio.CancelledError:
        spawned.add_done_callback(functools.partial(_abandon, call))
        raise
    except BaseException:
        call.free_later(loop)
        raise
    try:
        call.watch(loop, timeout_ms)
        code = await call.exited
        return call.result(args, code)
    except BaseException:
        call.kill()  # a cancelled task, or any failure, leaves nothing running
        raise
    finally:
        call.unwatch_all()
        call.free_later(loop)  # not awaited: the result is the caller's now


def _close_unwanted(opened: "asyncio.Future[Session]") -> None:
    if not opened.cancelled() and opened.exception() is None:
        opened.result().close()


async def open_async(policy: Optional[Mapping[str, Any]] = None, **kwargs: Any) -> "Session":
    """Session(policy, **kwargs) for asyncio: the open (the proof, the
    sandbox's start) runs in the loop's default executor, so the loop goes
    on meanwhile.  A cancelled open closes the session once it is open."""
    from ._session import Session
    opened = asyncio.get_running_loop().run_in_executor(
        None, functools.partial(Session, policy, **kwargs))
    try:
        return await asyncio.shield(opened)
    except asyncio.CancelledError:
        opened.add_done_callback(_close_unwanted)
        raise
