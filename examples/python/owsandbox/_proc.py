"""A call as a proc handle: spawned on pipes the host reads, waited for on
the proc's descriptor (ows_proc_fd).  Session.run drives it with a selector
on the calling thread, so that Ctrl-C (KeyboardInterrupt) interrupts the
wait as it does subprocess.run's, and the command is killed before the
exception goes on; run_async drives the same call from the event loop.

When the command has exited, what it wrote is already in the pipes: that is
drained, and nothing more is waited for (a daemon it left may hold them)."""
from __future__ import annotations

import ctypes
import errno
import os
import selectors
import subprocess
import time
from typing import TYPE_CHECKING, Callable, List, Optional, Tuple

from ._native import STDIO_NULL, Code, Error, SpawnOptions, _Err, check, lib, take_string

if TYPE_CHECKING:
    from ._session import RunResult, Session

# stderr=STDOUT: one time-ordered stream, as subprocess's (the same value, so
# subprocess.STDOUT works too).
STDOUT = subprocess.STDOUT
DEFAULT_LIMIT = 1 << 20  # as ows_run_options' output_limit
_CHUNK = 65536
Sink = Optional[Callable[[int, bytes], None]]


class CommandNotFound(Error, FileNotFoundError):
    """The command to run does not exist (OWS_ESPAWN, ENOENT): what
    subprocess raises, FileNotFoundError, carrying the library's what, where
    and hint as owsandbox.Error does."""

    def __init__(self, e: Error, command: bytes) -> None:
        Error.__init__(self, e.code, e.what, e.where, e.hint, e.sys_errno, e.name)
        self.errno = errno.ENOENT
        self.strerror = os.strerror(errno.ENOENT)
        self.filename = os.fsdecode(command)

    def __str__(self) -> str:  # the library's text, not OSError's "[Errno 2] ..."
        return str(self.args[0])


def check_output_options(stderr: Optional[int], output_limit: Optional[int],
                         output_keep: str) -> int:
    if stderr not in (None, subprocess.PIPE, STDOUT):
        raise ValueError("stderr must be None (captured apart) or owsandbox.STDOUT "
                         "(one stream with stdout)")
    if output_keep not in ("head", "tail"):
        raise ValueError('output_keep must be "head" or "tail"')
    if output_limit is None:
        return DEFAULT_LIMIT
    if output_limit <= 0:
        raise ValueError("output_limit must be a positive number of bytes")
    return output_limit


class Capture:
    """One output pipe: up to `limit` bytes kept, the first ones ("head") or
    the last ones ("tail"), the rest read and dropped; all of it handed to
    `sink` too when there is one (its exception ends the call)."""

    def __init__(self, fd: int, stream: int, limit: int, keep: str, sink: Sink) -> None:
        self.fd, self.stream, self.limit, self.tail, self.sink = \
            fd, stream, limit, keep == "tail", sink
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
        self._keep(data)
        if self.sink is not None:
            self.sink(self.stream, data)
        return True

    def _keep(self, data: bytes) -> None:
        self.buf += data
        extra = len(self.buf) - self.limit
        if extra > 0:
            self.truncated = True
            if self.tail:
                del self.buf[:extra]
            else:
                del self.buf[self.limit:]

    def drain(self) -> None:
        while not self.eof and self.read_once():
            pass


class Proc:
    """One command of a session: its pipes, its handle, its captures."""

    def __init__(self, session: "Session", limit: int, keep: str, merged: bool,
                 sink: Sink) -> None:
        self.h = session._h
        self.enforcement = session.enforcement
        self.limit, self.keep, self.merged, self.sink = limit, keep, merged, sink
        self.proc = ctypes.c_void_p()
        self.proc_fd = -1
        self.fds: List[int] = []  # ours to close
        self.caps: List[Capture] = []
        self.in_w = -1
        self.pending = memoryview(b"")
        self.timed_out = False
        self.started = self.ended = 0.0

    # -- start (blocking: run_async calls it in a thread)

    def spawn(self, args: List[bytes], envv: Optional[List[bytes]], cwd: Optional[bytes],
              data: Optional[bytes], where: str) -> None:
        child: List[int] = []  # the ends the command gets (the library duplicates them)
        try:
            stdin = STDIO_NULL
            if data is not None:
                stdin, self.in_w = self._pipe(child, reader_is_child=True)
                self.pending = memoryview(data)
            out_r, out_w = self._pipe(child, reader_is_child=False)
            self.caps.append(Capture(out_r, 1, self.limit, self.keep, self.sink))
            err_w = out_w
            if not self.merged:
                err_r, err_w = self._pipe(child, reader_is_child=False)
                self.caps.append(Capture(err_r, 2, self.limit, self.keep, self.sink))
            self._spawn(args, envv, cwd, (stdin, out_w, err_w), where)
        finally:
            for fd in child:
                os.close(fd)
        self.started = time.monotonic()
        self.proc_fd = lib().fn("ows_proc_fd")(self.proc)
        if self.proc_fd < 0:
            raise Error(Code.ESTATE, "the process has no descriptor to wait on",
                        "ows_proc_fd", "report this: the library should give one")

    def _pipe(self, child: List[int], reader_is_child: bool) -> Tuple[int, int]:
        r, w = os.pipe()  # close-on-exec: only the library's duplicates reach the command
        ours = w if reader_is_child else r
        child.append(r if reader_is_child else w)
        self.fds.append(ours)
        os.set_blocking(ours, False)  # only ours: the command's end stays blocking
        return r, w

    def _spawn(self, args: List[bytes], envv: Optional[List[bytes]], cwd: Optional[bytes],
               stdio: Tuple[int, int, int], where: str) -> None:
        from ._session import _strv
        L = lib()
        opts = SpawnOptions()
        L.fn("ows_spawn_options_init")(ctypes.byref(opts))
        opts.cwd = cwd
        env_arr = _strv(envv) if envv is not None else None
        if env_arr is not None:
            opts.env = ctypes.cast(env_arr, ctypes.POINTER(ctypes.c_char_p))
        opts.stdio[0], opts.stdio[1], opts.stdio[2] = stdio
        err = _Err()
        with self.h.use(where) as ptr:
            rc = L.fn("ows_session_spawn")(ptr, _strv(args), ctypes.byref(opts),
                                           ctypes.byref(self.proc), ctypes.byref(err))
        try:
            check(rc, err)
        except Error as e:
            if e.code == Code.ESPAWN and e.sys_errno == errno.ENOENT:
                raise CommandNotFound(e, args[0]) from None
            raise

    # -- while it runs (procs outlive their session: no session pointer needed)

    def poll_exit(self) -> Optional[int]:
        """The exit code (128+N for signal N) once it has exited, else None."""
        code, err = ctypes.c_int(), _Err()
        rc = lib().fn("ows_proc_wait")(self.proc, 0, ctypes.byref(code), ctypes.byref(err))
        if check(rc, err) == 0:
            return None
        self.ended = time.monotonic()
        return code.value

    def write_input(self) -> bool:
        """Writes what stdin can take now; True once all of it went (or the
        command closed its end): then close_input()."""
        try:
            n = os.write(self.in_w, self.pending[:_CHUNK])
        except BlockingIOError:
            return False
        except OSError:  # the command closed its stdin: the rest is not wanted
            n = len(self.pending)
        self.pending = self.pending[n:]
        return not self.pending

    def close_input(self) -> None:
        self.fds.remove(self.in_w)
        os.close(self.in_w)
        self.in_w = -1

    def kill(self) -> None:
        """SIGKILL to the command and what it started; quiet when it is gone."""
        if self.proc.value:
            lib().fn("ows_proc_kill")(self.proc, 9, ctypes.byref(_Err()))

    def result(self, args: List[bytes], status: int) -> "RunResult":
        from ._session import RunResult, _blocked_list
        for cap in self.caps:
            cap.drain()
        out, err = ctypes.c_void_p(), _Err()
        rc = lib().fn("ows_proc_blocked_json")(self.proc, ctypes.byref(out), ctypes.byref(err))
        text = take_string(out)
        # A session closed under the call: its output is still the caller's.
        blocked = _blocked_list(text) if rc == 0 else []
        signo = lib().fn("ows_proc_signal")(self.proc) if lib().has("ows_proc_signal") else 0
        stderr = self.caps[1] if len(self.caps) > 1 else None
        return RunResult(
            argv=[os.fsdecode(a) for a in args], returncode=-signo if signo else status,
            stdout=bytes(self.caps[0].buf), stderr=bytes(stderr.buf) if stderr else b"",
            timed_out=self.timed_out, stdout_truncated=self.caps[0].truncated,
            stderr_truncated=stderr.truncated if stderr else False,
            wall_ms=int(((self.ended or time.monotonic()) - self.started) * 1000),
            blocked=blocked, enforcement=self.enforcement, exit_status=status)

    def free(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds.clear()
        self.in_w = -1
        if self.proc.value:
            lib().fn("ows_proc_free")(self.proc)  # safe after close too: the handle is inert
            self.proc = ctypes.c_void_p()

    # -- run(): the calling thread waits

    def wait(self, timeout_ms: int) -> int:
        """Waits for the exit with a selector (interruptible: a signal's
        handler may raise here), feeding stdin and reading output."""
        deadline = self.started + timeout_ms / 1000.0 if timeout_ms > 0 else None
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc_fd, selectors.EVENT_READ, None)
            for cap in self.caps:
                sel.register(cap.fd, selectors.EVENT_READ, cap)
            if self.in_w >= 0:
                if self.pending:
                    sel.register(self.in_w, selectors.EVENT_WRITE, self)
                else:
                    self.close_input()
            while True:
                wait = None
                if deadline is not None:
                    wait = deadline - time.monotonic()
                    if wait <= 0:
                        self.timed_out, deadline, wait = True, None, None
                        self.kill()  # then the descriptor turns readable
                for key, _ in sel.select(wait):
                    if key.data is None:
                        code = self.poll_exit()
                        if code is not None:
                            return code
                    elif key.data is self:
                        if self.write_input():
                            sel.unregister(self.in_w)
                            self.close_input()
                    else:
                        key.data.read_once()
                        if key.data.eof:
                            sel.unregister(key.data.fd)
