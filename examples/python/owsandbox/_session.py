"""Session: one sandbox, its commands, and its sites."""
from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import math
import os
import threading
import weakref
from dataclasses import dataclass, field
from typing import (Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence,
                    Tuple, Union)

from ._native import (OUTPUT_FN, EVENT_FN, Code, Error, RunOptions,
                      RunResultStruct, SessionOptions, _Err, check, lib,
                      take_string)

StrOrBytesPath = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
Argv = Union[StrOrBytesPath, Sequence[StrOrBytesPath]]
Input = Union[bytes, bytearray, memoryview, str]

_INT_MAX = 0x7FFFFFFF


# ------------------------------------------------------------------ values

@dataclass(frozen=True)
class BlockedSite:
    """A site the allow list refused, and the pattern that would let it through."""

    host: str
    port: int
    reason: str = ""
    allow: str = ""
    count: int = 0
    first_ms: int = 0
    last_ms: int = 0
    denied_by: str = ""  # reason "denied": the deny entry ("!evil.example:*"); allow is ""

    @classmethod
    def _of(cls, d: Mapping[str, Any]) -> "BlockedSite":
        return cls(str(d.get("host", "")), int(d.get("port", 0)), str(d.get("reason", "")),
                   str(d.get("allow", "")), int(d.get("count", 0)),
                   int(d.get("first_ms", 0)), int(d.get("last_ms", 0)),
                   str(d.get("denied_by", "")))


@dataclass(frozen=True)
class SiteCheck:
    """Whether the session's list lets host:port through; true when it does."""

    allowed: bool
    host: str
    port: int
    pattern: Optional[str] = None
    reason: Optional[str] = None
    allow: Optional[str] = None

    def __bool__(self) -> bool:
        return self.allowed


@dataclass(frozen=True)
class Site:
    """One entry of the session's list and where it came from: "machine",
    "policy", "credential" or "session"."""

    pattern: str
    source: str


@dataclass(frozen=True)
class RunResult:
    """What a command did: its exit status, its output (bytes, each capped),
    whether the timeout killed it, and the sites refused to it.  returncode
    is subprocess's: -N when signal N ended it (a timeout's kill too: -9);
    exit_status is the shell's: 128+N then, the exit code otherwise."""

    argv: List[str]
    returncode: int
    stdout: bytes
    stderr: bytes
    timed_out: bool = False
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    wall_ms: int = 0
    blocked: List[BlockedSite] = field(default_factory=list)
    enforcement: str = ""
    exit_status: int = -1  # set from returncode when not given

    def __post_init__(self) -> None:
        if self.exit_status == -1:
            object.__setattr__(self, "exit_status", self.returncode)

    @property
    def text(self) -> str:
        """stdout as text (UTF-8, undecodable bytes replaced)."""
        return self.stdout.decode("utf-8", "replace")

    @property
    def stderr_text(self) -> str:
        return self.stderr.decode("utf-8", "replace")

    @property
    def ok(self) -> bool:
        """Exit status 0 and not timed out."""
        return self.returncode == 0 and not self.timed_out

    def check_returncode(self) -> None:
        """Raises subprocess's TimeoutExpired or CalledProcessError, as
        CompletedProcess.check_returncode() does."""
        import subprocess
        if self.timed_out:
            raise subprocess.TimeoutExpired(self.argv, self.wall_ms / 1000.0, self.stdout,
                                            self.stderr)
        if self.returncode:
            raise subprocess.CalledProcessError(self.returncode, self.argv, self.stdout,
                                                self.stderr)


# ------------------------------------------------------ arguments, as subprocess

def _cstr(value: StrOrBytesPath, what: str = "argument") -> bytes:
    """A C string of value; a NUL inside is refused, as subprocess refuses it."""
    if not isinstance(value, (str, bytes, os.PathLike)):
        raise TypeError("%s must be str, bytes or os.PathLike, not %s"
                        % (what, type(value).__name__))
    b = os.fsencode(value)
    if b"\0" in b:
        raise ValueError("embedded null byte")
    return b


def _argv(argv: Argv) -> List[bytes]:
    if isinstance(argv, (str, bytes, os.PathLike)):
        argv = [argv]
    args = [_cstr(a, "argv item") for a in argv]
    if not args or not args[0]:
        raise ValueError("argv is empty: give the command to run")
    return args


def _strv(items: Sequence[bytes]) -> "ctypes.Array[ctypes.c_char_p]":
    return (ctypes.c_char_p * (len(items) + 1))(*items, None)


def _envv(env: Optional[Mapping[StrOrBytesPath, StrOrBytesPath]]) -> Optional[List[bytes]]:
    if env is None:
        return None
    out = []
    for k, v in env.items():
        kb, vb = _cstr(k, "environment name"), _cstr(v, "environment value")
        if not kb or b"=" in kb:
            raise ValueError("illegal environment variable name")
        out.append(kb + b"=" + vb)
    return out


def _timeout_ms(timeout: Optional[float]) -> int:
    if timeout is None:
        return 0
    if not timeout > 0:
        raise ValueError("timeout must be a positive number of seconds, or None")
    return min(_INT_MAX, max(1, math.ceil(timeout * 1000)))


def _input_bytes(data: Optional[Input]) -> Optional[bytes]:
    if data is None:
        return None
    return data.encode("utf-8") if isinstance(data, str) else bytes(data)


def _cwd(cwd: Optional[StrOrBytesPath]) -> Optional[bytes]:
    return None if cwd is None else _cstr(os.path.abspath(os.fspath(cwd)), "cwd")


_ACCESS = {"ro": 1, "rw": 2}  # ows_access


def _utf8(path: Any) -> Optional[str]:
    """path as the text JSON can carry, or None when its bytes are not UTF-8
    (then it goes to the library as bytes)."""
    try:
        return os.fsencode(path).decode("utf-8")
    except (TypeError, UnicodeDecodeError):
        return None


def _lift_byte_paths(doc: Dict[str, Any]) -> Tuple[List[Tuple[bytes, int]], List[bytes]]:
    """Takes the folders and toolchains whose paths JSON cannot carry
    (bytes, os.PathLike, surrogate-escaped str that are not UTF-8: paths are
    bytes on Linux) out of doc, for the policy's setters; the others stay,
    as text, for the library's own checks and messages."""
    folders: List[Tuple[bytes, int]] = []
    toolchains: List[bytes] = []
    if isinstance(doc.get("folders"), (list, tuple)):
        kept = []
        for f in doc["folders"]:
            path = f.get("path") if isinstance(f, Mapping) else None
            if isinstance(path, (str, bytes, os.PathLike)) and set(f) <= {"path", "access"}:
                text = _utf8(path)
                if text is None:
                    access = f.get("access", "rw")
                    if access not in _ACCESS:
                        raise ValueError('folder access must be "rw" or "ro", not %r'
                                         % (access,))
                    folders.append((_cstr(path, "folder path"), _ACCESS[access]))
                    continue
                f = dict(f, path=text)
            kept.append(f)
        doc["folders"] = kept
    if isinstance(doc.get("toolchains"), (list, tuple)):
        kept = []
        for t in doc["toolchains"]:
            text = _utf8(t) if isinstance(t, (str, bytes, os.PathLike)) else t
            if text is None:
                toolchains.append(_cstr(t, "toolchain path"))
            else:
                kept.append(text)
        doc["toolchains"] = kept
    return folders, toolchains


def _json_default(o: Any) -> Any:
    if isinstance(o, os.PathLike):
        return os.fspath(o)
    raise TypeError("policy value of type %s is not JSON" % type(o).__name__)


def _blocked_list(text: str) -> List[BlockedSite]:
    return [BlockedSite._of(d) for d in json.loads(text or "[]")]


# ----------------------------------------------------------------- the handle

class _Handle:
    """The session pointer and the calls in flight on it.  The lock is held
    only to count calls, never across one, so that calls from several
    threads run in parallel; close waits until none is in flight, so that no
    call ever gets a pointer the library has freed."""

    def __init__(self, ptr: int) -> None:
        self.ptr: Optional[int] = ptr
        self.lock = threading.Lock()
        self.idle = threading.Condition(self.lock)
        self.calls = 0
        self.local = threading.local()

    @contextlib.contextmanager
    def use(self, where: str) -> Iterator[int]:
        with self.lock:
            if self.ptr is None:
                raise Error(Code.ESTATE, "the session is closed", where,
                            "open a new Session")
            self.calls += 1
            ptr = self.ptr
        self.local.depth = getattr(self.local, "depth", 0) + 1
        try:
            yield ptr
        finally:
            self.local.depth -= 1
            with self.lock:
                self.calls -= 1
                if self.calls == 0:
                    self.idle.notify_all()

    def take(self) -> Optional[int]:
        """Marks the handle closed, ends the session's commands and waits for
        the calls in flight to return; the pointer to close, or None when it
        was closed already."""
        if getattr(self.local, "depth", 0):
            raise Error(Code.ESTATE, "cannot close a session from inside one of its calls",
                        "Session.close", "close it after the call returns")
        with self.lock:
            ptr, self.ptr = self.ptr, None
        if ptr is not None:
            # Its commands end now, so that calls in flight on other threads return
            # (a run with no timeout too) before the pointer is freed.
            lib().fn("ows_session_shutdown")(ptr, None)
        # run_async calls wait on their command's descriptor, which the
        # shutdown made readable: they return what their command wrote.
        with self.lock:
            while ptr is not None and self.calls:
                self.idle.wait()
        return ptr


def _close_ptr(handle: _Handle, keep: List[Any]) -> None:
    ptr = handle.take()
    if ptr is not None:
        err = _Err()
        rc = lib().fn("ows_session_close")(ptr, ctypes.byref(err))
        keep.clear()  # the event callback may go only after the library is done with it
        check(rc, err)


# ----------------------------------------------------------------- session

class Session:
    """One sandbox: opened and proved by the constructor, closed by close()
    or at the end of a `with` block.

    The policy is the JSON policy of the library as a dict, keyword
    arguments, or both (the keywords win)::

        Session({"folders": [{"path": "/srv/w", "access": "rw"}]}, network="none")

    `config` names the machine's config file (default: the machine's own);
    `events_path` appends the session's events as JSON lines there, and
    `on_event` is called with each event as a dict (from the thread that
    caused it).  Every method may be called from several threads at once.
    """

    def __init__(self, policy: Optional[Mapping[str, Any]] = None, *,
                 config: Optional[StrOrBytesPath] = None,
                 events_path: Optional[StrOrBytesPath] = None,
                 on_event: Optional[Callable[[Dict[str, Any]], None]] = None,
                 **policy_keys: Any) -> None:
        doc = dict(policy or {})
        doc.update(policy_keys)
        byte_folders, byte_toolchains = _lift_byte_paths(doc)
        self._keep: List[Any] = []  # what the library calls back into
        ptr = self._open(json.dumps(doc, default=_json_default).encode(), byte_folders,
                         byte_toolchains, config, events_path, on_event)
        self._h = _Handle(ptr)
        L = lib()
        self.id: str = L.fn("ows_session_id")(ptr).decode()
        self.provider: str = L.fn("ows_session_provider")(ptr).decode()
        self.enforcement: str = L.fn("ows_session_enforcement")(ptr).decode()
        self.proof: Dict[str, Any] = json.loads(L.fn("ows_session_proof_json")(ptr) or b"{}")
        self.private_dir: str = os.fsdecode(L.fn("ows_session_private_dir")(ptr) or b"")
        self.agent_text: str = (L.fn("ows_session_agent_text")(ptr) or b"").decode()
        # A session dropped without close() still ends its commands.
        self._finalizer = weakref.finalize(self, _close_ptr, self._h, self._keep)

    def _open(self, policy_json: bytes, byte_folders: List[Tuple[bytes, int]],
              byte_toolchains: List[bytes], config: Optional[StrOrBytesPath],
              events_path: Optional[StrOrBytesPath],
              on_event: Optional[Callable[[Dict[str, Any]], None]]) -> int:
        L = lib()
        err = _Err()
        pol, cfg, out = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
        check(L.fn("ows_policy_from_json")(policy_json, len(policy_json), ctypes.byref(pol),
                                           ctypes.byref(err)), err)
        try:
            for path, access in byte_folders:
                check(L.fn("ows_policy_add_folder")(pol, path, access, ctypes.byref(err)), err)
            for path in byte_toolchains:
                check(L.fn("ows_policy_add_toolchain")(pol, path, ctypes.byref(err)), err)
            if config is not None:
                check(L.fn("ows_config_load")(_cstr(config, "config"), ctypes.byref(cfg),
                                              ctypes.byref(err)), err)
            opts = SessionOptions()
            L.fn("ows_session_options_init")(ctypes.byref(opts))
            if events_path is not None:
                self._keep.append(_cstr(events_path, "events_path"))
                opts.events_path = self._keep[-1]
            if on_event is not None:
                handler = on_event  # bound here: the closure outlives this frame
                cb = EVENT_FN(lambda _ctx, line: handler(json.loads(line)))
                self._keep.append(cb)
                opts.on_event = cb
            check(L.fn("ows_session_open")(pol, cfg, ctypes.byref(opts), ctypes.byref(out),
                                           ctypes.byref(err)), err)
        finally:
            L.fn("ows_policy_free")(pol)
            if cfg.value:
                L.fn("ows_config_free")(cfg)
        assert out.value
        return out.value

    # -- lifecycle

    def close(self) -> None:
        """Ends every process of the session, daemons included, removes its
        private folder and revokes what it granted.  Calls in other threads
        return first: their commands are ended too.  A second close does
        nothing; any later call raises Error (OWS_ESTATE)."""
        _close_ptr(self._h, self._keep)  # raises before closing only from inside a call
        self._finalizer.detach()

    @property
    def closed(self) -> bool:
        return self._h.ptr is None

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    async def aclose(self) -> None:
        """close() for asyncio: it runs in the loop's default executor."""
        await asyncio.get_running_loop().run_in_executor(None, self.close)

    async def __aenter__(self) -> "Session":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        state = "closed" if self.closed else self.enforcement
        return "<owsandbox.Session %s %s %s>" % (self.id[:8], self.provider, state)

    # -- run

    def run(self, argv: Argv, *, timeout: Optional[float] = None,
            input: Optional[Input] = None, cwd: Optional[StrOrBytesPath] = None,
            env: Optional[Mapping[StrOrBytesPath, StrOrBytesPath]] = None,
            stderr: Optional[int] = None, output_limit: Optional[int] = None,
            output_keep: str = "head",
            on_output: Optional[Callable[[int, bytes], None]] = None) -> RunResult:
        """Runs argv in the session and waits for it, as subprocess.run with
        capture_output: stdout and stderr come back as bytes, each capped at
        output_limit (1 MiB by default) with a truncated flag; output_keep
        "tail" keeps the last bytes instead of the first (a build log's end).
        stderr=owsandbox.STDOUT makes one time-ordered stream of both, in
        stdout.  `timeout` in seconds kills the command and all it started
        (timed_out is set: no exception).  `input` is written to its stdin
        (else /dev/null), `env` adds variables, `on_output(stream, data)` sees
        output as it comes (1 stdout, 2 stderr), on this thread: what it
        raises kills the command and comes out of run().  Ctrl-C
        (KeyboardInterrupt) kills the command and what it started, as does
        the session's close from another thread (run then returns what the
        command wrote).  A missing command raises CommandNotFound (a
        FileNotFoundError); another that cannot start Error (OWS_ESPAWN);
        any exit status is a result."""
        if os.name == "nt":  # no descriptor to wait on there: the library waits
            return self._run_native(argv, timeout, input, cwd, env, stderr, output_limit,
                                    output_keep, on_output)
        from ._proc import STDOUT, Proc, check_output_options
        args, envv, cwdb = _argv(argv), _envv(env), _cwd(cwd)
        data, timeout_ms = _input_bytes(input), _timeout_ms(timeout)
        limit = check_output_options(stderr, output_limit, output_keep)
        call = Proc(self, limit, output_keep, stderr == STDOUT, on_output)
        # Counted as a call throughout: close() ends the command and waits for this.
        with self._h.use("Session.run"):
            try:
                call.spawn(args, envv, cwdb, data, "Session.run")
                return call.result(args, call.wait(timeout_ms))
            except BaseException:
                call.kill()  # Ctrl-C, or on_output's exception: nothing left running
                raise
            finally:
                call.free()

    def _run_native(self, argv: Argv, timeout: Optional[float], input: Optional[Input],
                    cwd: Optional[StrOrBytesPath],
                    env: Optional[Mapping[StrOrBytesPath, StrOrBytesPath]],
                    stderr: Optional[int], output_limit: Optional[int], output_keep: str,
                    on_output: Optional[Callable[[int, bytes], None]]) -> RunResult:
        """run() through ows_session_run (Windows): no merged stream, no tail."""
        if stderr is not None or output_keep != "head":
            raise ValueError("stderr and output_keep are not available on Windows")
        L = lib()
        args = _argv(argv)
        arr = _strv(args)
        opts = RunOptions()
        L.fn("ows_run_options_init")(ctypes.byref(opts))
        keep = self._run_options(opts, timeout, input, cwd, env, output_limit, on_output)
        res = ctypes.POINTER(RunResultStruct)()
        err = _Err()
        with self._h.use("Session.run") as ptr:
            rc = L.fn("ows_session_run")(ptr, arr, ctypes.byref(opts), ctypes.byref(res),
                                         ctypes.byref(err))
        del keep
        check(rc, err)
        try:
            return _result_of(args, res.contents)
        finally:
            L.fn("ows_run_result_free")(res)

    @staticmethod
    def _run_options(opts: RunOptions, timeout: Optional[float], input: Optional[Input],
                     cwd: Optional[StrOrBytesPath],
                     env: Optional[Mapping[StrOrBytesPath, StrOrBytesPath]],
                     output_limit: Optional[int],
                     on_output: Optional[Callable[[int, bytes], None]]) -> List[Any]:
        keep: List[Any] = []  # buffers the C side reads during the call
        opts.timeout_ms = _timeout_ms(timeout)
        if output_limit is not None:
            if output_limit <= 0:
                raise ValueError("output_limit must be a positive number of bytes")
            opts.output_limit = output_limit
        opts.cwd = _cwd(cwd)
        envv = _envv(env)
        if envv is not None:
            keep.append(_strv(envv))
            opts.env = ctypes.cast(keep[-1], ctypes.POINTER(ctypes.c_char_p))
        data = _input_bytes(input)
        if data is not None:
            keep.append(ctypes.create_string_buffer(data, len(data) + 1))
            opts.input = ctypes.cast(keep[-1], ctypes.c_void_p)
            opts.input_len = len(data)
        if on_output is not None:
            sink = on_output

            def relay(_ctx: Any, stream: int, buf: Any, n: int) -> None:
                sink(stream, ctypes.string_at(buf, n))
            keep.append(OUTPUT_FN(relay))
            opts.on_output = keep[-1]
        return keep

    async def run_async(self, argv: Argv, *, timeout: Optional[float] = None,
                        input: Optional[Input] = None, cwd: Optional[StrOrBytesPath] = None,
                        env: Optional[Mapping[StrOrBytesPath, StrOrBytesPath]] = None,
                        stderr: Optional[int] = None, output_limit: Optional[int] = None,
                        output_keep: str = "head",
                        on_output: Optional[Callable[[int, bytes], None]] = None) -> RunResult:
        """run() for asyncio, never blocking the loop: the spawn runs in the
        loop's default executor, then the loop waits on the process's
        descriptor (ows_proc_fd) and on its output pipes.  A timeout kills
        the command (timed_out); cancelling the task kills it too, before
        CancelledError goes on.  on_output is called on the loop; what it
        raises kills the command and comes out of the await."""
        from ._aio import run_async
        return await run_async(self, argv, timeout, input, cwd, env, stderr, output_limit,
                               output_keep, on_output)

    # -- sites

    def allow_site(self, pattern: str) -> None:
        """Opens a site ("host:port", "*.example.com:443", "@group") for the
        running session, at once (network "allowlist")."""
        self._call("ows_session_allow_site", "Session.allow_site", _cstr(pattern, "pattern"))

    def remove_site(self, pattern: str) -> None:
        """Takes a site back; established connections are not cut."""
        self._call("ows_session_remove_site", "Session.remove_site", _cstr(pattern, "pattern"))

    def blocked(self, since_ms: int = 0) -> List[BlockedSite]:
        """The sites the allow list refused (since since_ms, Unix epoch ms)."""
        out = ctypes.c_void_p()
        self._call("ows_session_blocked_json", "Session.blocked", int(since_ms),
                   ctypes.byref(out))
        return _blocked_list(take_string(out))

    def check_site(self, host: str, port: int = 443) -> SiteCheck:
        """Whether the list lets host:port through, without connecting: what
        the host's own web tools ask before they reach out."""
        if not 0 < port < 65536:
            raise ValueError("port must be in 1-65535")
        out = ctypes.c_void_p()
        rc = self._call("ows_session_check_site", "Session.check_site", _cstr(host, "host"),
                        port, ctypes.byref(out))
        d = json.loads(take_string(out) or "{}")
        return SiteCheck(rc == 1, str(d.get("host", host)), int(d.get("port", port)),
                         d.get("pattern"), d.get("reason"), d.get("allow"))

    def sites(self) -> List[Site]:
        """The session's sites and where each came from, for an Access view."""
        out = ctypes.c_void_p()
        self._call("ows_session_sites_json", "Session.sites", ctypes.byref(out))
        return [Site(str(d.get("pattern", "")), str(d.get("source", "")))
                for d in json.loads(take_string(out) or "[]")]

    def set_ask(self, handler: Optional[Callable[[str, int], Any]], *,
                timeout: float = 60.0, loop: Optional[asyncio.AbstractEventLoop] = None) -> None:
        """Asks instead of refusing (network "allowlist"): a command's
        connection to a site the list does not name is held, and
        handler(host, port) decides; True lets that request through, False
        (or an exception) refuses it with the usual 403.  No answer within
        `timeout` seconds refuses it too.  A plain function runs on a thread
        of its own (it may wait for the person); an `async def` runs as a
        task on `loop` (default: the running loop).  Refusals show in
        blocked() as always; deny entries are never asked.  To stop asking
        for a site, allow_site() it.  None stops asking."""
        from ._ask import c_hook, loop_for
        if timeout <= 0:
            raise ValueError("timeout must be positive (seconds)")
        cb = c_hook(handler, loop_for(handler, loop)) if handler is not None else None
        self._call("ows_session_set_ask", "Session.set_ask", cb, None,
                   max(1, int(timeout * 1000)))
        if cb is not None:
            self._keep.append(cb)  # until close: the library calls it until then

    def _call(self, name: str, where: str, *args: Any) -> int:
        err = _Err()
        with self._h.use(where) as ptr:
            rc = lib().fn(name)(ptr, *args, ctypes.byref(err))
        return check(rc, err)


def _result_of(args: List[bytes], r: RunResultStruct) -> RunResult:
    return RunResult(
        argv=[os.fsdecode(a) for a in args],
        returncode=r.exit_code,
        stdout=ctypes.string_at(r.out, r.out_len) if r.out else b"",
        stderr=ctypes.string_at(r.err, r.err_len) if r.err else b"",
        timed_out=bool(r.timed_out),
        stdout_truncated=bool(r.out_truncated),
        stderr_truncated=bool(r.err_truncated),
        wall_ms=int(r.wall_ms),
        blocked=_blocked_list(ctypes.string_at(r.blocked_json).decode() if r.blocked_json
                              else "[]"),
        enforcement=(r.enforcement or b"").decode(),
    )
