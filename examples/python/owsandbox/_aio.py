"""run_async: a command in the session, waited for by the event loop.

The loop waits on three descriptors: the process's own (ows_proc_fd, readable
once it has exited) and the read ends of its stdout and stderr pipes; stdin
is a pipe the loop writes the input into.  No thread, no polling.  When the
command has exited, what it wrote is already in the pipes: that is drained,
and nothing more is waited for (a daemon it left may hold the pipes open).

Why not ows_session_run in a thread: a task running it could not be
cancelled (the thread holds no handle to kill), and each waiting call would
hold a thread.  Here every call is a proc handle the task owns, so a timeout
or a cancellation kills exactly its command."""
from __future__ import annotations

import asyncio
import ctypes
import os
import time
from typing import TYPE_CHECKING, Callable, List, Mapping, Optional

from ._native import STDIO_NULL, Code, Error, SpawnOptions, _Err, check, lib, take_string
from ._session import (Argv, Input, RunResult, StrOrBytesPath, _argv, _blocked_list, _cwd,
                       _envv, _input_bytes, _strv, _timeout_ms)

if TYPE_CHECKING:
    from ._session import Session

_DEFAULT_LIMIT = 1 << 20  # as ows_run_options' output_limit
_CHUNK = 65536


class _Capture:
    """One output stream: kept up to the limit, the rest read and dropped;
    all of it also handed to `sink` when there is one."""

    def __init__(self, fd: int, limit: int, stream: int,
                 sink: Optional[Callable[[int, bytes], None]]) -> None:
        self.fd = fd
        self.stream = stream
        self.sink = sink
        self.limit = limit
        self.buf = bytearray()
        self.truncated = False
        self.eof = False

    def read_once(self) -> bool:
        """Reads what is there; False when nothing was (or at the end)."""
        try:
            data = os.read(self.fd, _CHUNK)
        except BlockingIOError:
            return False
        except OSError:
            data = b""
        if not data:
            self.eof = True
            return False
        if self.sink is not None:
            self.sink(self.stream, data)
        room = self.limit - len(self.buf)
        if len(data) > room:
            self.truncated = True
            data = data[:max(room, 0)]
        self.buf += data
        return True


class _Call:
    def __init__(self, session: "Session", loop: asyncio.AbstractEventLoop, limit: int,
                 sink: Optional[Callable[[int, bytes], None]]) -> None:
        self.h = session._h
        self.sink = sink
        self.enforcement = session.enforcement
        self.loop = loop
        self.limit = limit
        self.proc = ctypes.c_void_p()
        self.proc_fd = -1
        self.fds: List[int] = []  # ours to close
        self.caps: List[_Capture] = []
        self.in_w = -1
        self.pending = memoryview(b"")
        self.exited: "asyncio.Future[int]" = loop.create_future()
        self.timer: Optional[asyncio.TimerHandle] = None
        self.timed_out = False
        self.started = 0.0
        self.ended = 0.0

    # -- start

    def start(self, args: List[bytes], envv: Optional[List[bytes]], cwd: Optional[bytes],
              data: Optional[bytes], timeout_ms: int) -> None:
        child: List[int] = []  # the ends the command gets (the library duplicates them)
        try:
            stdin = STDIO_NULL
            if data is not None:
                stdin, self.in_w = self._pipe(child, reader_is_child=True)
                self.pending = memoryview(data)
            outs = [self._pipe(child, reader_is_child=False) for _ in range(2)]
            self._spawn(args, envv, cwd, (stdin, outs[0][1], outs[1][1]))
        finally:
            for fd in child:
                os.close(fd)
        self.started = time.monotonic()
        self._watch([r for r, _ in outs], timeout_ms)

    def _pipe(self, child: List[int], reader_is_child: bool) -> "tuple[int, int]":
        r, w = os.pipe()  # close-on-exec: only the library's duplicates reach the command
        ours = w if reader_is_child else r
        child.append(r if reader_is_child else w)
        self.fds.append(ours)
        os.set_blocking(ours, False)  # only ours: the command's end stays blocking
        return r, w

    def _spawn(self, args: List[bytes], envv: Optional[List[bytes]], cwd: Optional[bytes],
               stdio: "tuple[int, int, int]") -> None:
        L = lib()
        L.fn("ows_proc_fd")  # before anything starts: this library can be waited on
        opts = SpawnOptions()
        L.fn("ows_spawn_options_init")(ctypes.byref(opts))
        opts.cwd = cwd
        env_arr = _strv(envv) if envv is not None else None
        if env_arr is not None:
            opts.env = ctypes.cast(env_arr, ctypes.POINTER(ctypes.c_char_p))
        opts.stdio[0], opts.stdio[1], opts.stdio[2] = stdio
        err = _Err()
        with self.h.use("Session.run_async") as ptr:
            rc = L.fn("ows_session_spawn")(ptr, _strv(args), ctypes.byref(opts),
                                           ctypes.byref(self.proc), ctypes.byref(err))
        check(rc, err)

    def _watch(self, outs: List[int], timeout_ms: int) -> None:
        self.proc_fd = lib().fn("ows_proc_fd")(self.proc)
        if self.proc_fd < 0:
            raise Error(Code.ESTATE, "the process has no descriptor to wait on",
                        "ows_proc_fd", "report this: the library should give one")
        with self.h.lock:
            if self.h.ptr is None:
                raise Error(Code.ESTATE, "the session closed while the command started",
                            "Session.run_async", "close the session after its calls")
            self.h.waiters.add((self.loop, self.exited))
        self.loop.add_reader(self.proc_fd, self._on_exit)
        for stream, fd in enumerate(outs, 1):
            cap = _Capture(fd, self.limit, stream, self.sink)
            self.caps.append(cap)
            self.loop.add_reader(fd, self._on_output, cap)
        if self.in_w >= 0:
            if self.pending:
                self.loop.add_writer(self.in_w, self._on_writable)
            else:
                self._close_input()
        if timeout_ms > 0:
            self.timer = self.loop.call_later(timeout_ms / 1000.0, self._on_timeout)

    # -- loop callbacks

    def _on_exit(self) -> None:
        code, err = ctypes.c_int(), _Err()
        try:
            with self.h.use("Session.run_async") as _:
                rc = lib().fn("ows_proc_wait")(self.proc, 0, ctypes.byref(code),
                                               ctypes.byref(err))
            if rc == 0:
                return  # not yet: the descriptor stays watched
            check(rc, err)
        except Error as e:
            self._stop_exit_watch()
            if not self.exited.done():
                self.exited.set_exception(e)
            return
        self.ended = time.monotonic()
        self._stop_exit_watch()
        if not self.exited.done():
            self.exited.set_result(code.value)

    def _on_output(self, cap: _Capture) -> None:
        cap.read_once()
        if cap.eof:
            self.loop.remove_reader(cap.fd)

    def _on_writable(self) -> None:
        try:
            n = os.write(self.in_w, self.pending[:_CHUNK])
        except BlockingIOError:
            return
        except OSError:  # the command closed its stdin: the rest is not wanted
            n = len(self.pending)
        self.pending = self.pending[n:]
        if not self.pending:
            self._close_input()

    def _close_input(self) -> None:
        self.loop.remove_writer(self.in_w)
        self.fds.remove(self.in_w)
        os.close(self.in_w)
        self.in_w = -1

    def _on_timeout(self) -> None:
        self.timer = None
        self.timed_out = True
        self.kill()

    # -- end

    def kill(self) -> None:
        """SIGKILL to the command and what it started; quiet when it is gone."""
        if not self.proc.value:
            return
        err = _Err()
        try:
            with self.h.use("Session.run_async") as _:
                lib().fn("ows_proc_kill")(self.proc, 9, ctypes.byref(err))
        except Error:
            pass

    def result(self, args: List[bytes], code: int) -> RunResult:
        for cap in self.caps:
            while not cap.eof and cap.read_once():
                pass
        out = ctypes.c_void_p()
        err = _Err()
        with self.h.use("Session.run_async") as _:
            rc = lib().fn("ows_proc_blocked_json")(self.proc, ctypes.byref(out),
                                                   ctypes.byref(err))
        check(rc, err)
        blocked = _blocked_list(take_string(out))
        return RunResult(
            argv=[os.fsdecode(a) for a in args], returncode=code,
            stdout=bytes(self.caps[0].buf), stderr=bytes(self.caps[1].buf),
            timed_out=self.timed_out, stdout_truncated=self.caps[0].truncated,
            stderr_truncated=self.caps[1].truncated,
            wall_ms=int((self.ended - self.started) * 1000), blocked=blocked,
            enforcement=self.enforcement)

    def _stop_exit_watch(self) -> None:
        if self.proc_fd >= 0:
            self.loop.remove_reader(self.proc_fd)
            self.proc_fd = -1

    def cleanup(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self._stop_exit_watch()
        for cap in self.caps:
            self.loop.remove_reader(cap.fd)
        if self.in_w >= 0:
            self.loop.remove_writer(self.in_w)
        for fd in self.fds:
            os.close(fd)
        self.fds.clear()
        with self.h.lock:
            self.h.waiters.discard((self.loop, self.exited))
        if self.proc.value:
            lib().fn("ows_proc_free")(self.proc)  # safe after close too: the handle is inert
            self.proc = ctypes.c_void_p()


async def run_async(session: "Session", argv: Argv, timeout: Optional[float],
                    input: Optional[Input], cwd: Optional[StrOrBytesPath],
                    env: Optional[Mapping[StrOrBytesPath, StrOrBytesPath]],
                    output_limit: Optional[int],
                    on_output: Optional[Callable[[int, bytes], None]]) -> RunResult:
    args, envv, cwdb = _argv(argv), _envv(env), _cwd(cwd)
    data, timeout_ms = _input_bytes(input), _timeout_ms(timeout)
    if output_limit is not None and output_limit <= 0:
        raise ValueError("output_limit must be a positive number of bytes")
    call = _Call(session, asyncio.get_running_loop(), output_limit or _DEFAULT_LIMIT, on_output)
    try:
        call.start(args, envv, cwdb, data, timeout_ms)
        code = await call.exited
        return call.result(args, code)
    except BaseException:
        call.kill()  # a cancelled task, or any failure, leaves nothing running
        raise
    finally:
        call.cleanup()


