"""The C ABI of libowsandbox through ctypes: finding the library, the
prototypes, and the error type.  Nothing here is compiled: the package
installs with no compiler and loads the shared library at run time."""
from __future__ import annotations

import ctypes
import ctypes.util
import enum
import os
import threading
from typing import Any, Callable, Dict, Optional

# The header this package is written for (include/owsandbox.h), and so the
# soname of its ABI: libowsandbox.so.0.MINOR before 1.0 (each 0.x minor may
# change the ABI), libowsandbox.so.MAJOR from 1.0 on.
HEADER_VERSION = "0.2.0"
ABI_MAJOR, ABI_MINOR = 0, 2
SONAME = "libowsandbox.so.%d.%d" % (ABI_MAJOR, ABI_MINOR) if ABI_MAJOR == 0 \
    else "libowsandbox.so.%d" % ABI_MAJOR

# Where the build puts the library, relative to the checkout, and the name the
# system's loader knows it by.  On Windows `make windows` builds
# build/win/owsandbox.dll, whose ABI check is the version call below (a DLL has
# no soname); installed, it is found on PATH or beside python.exe.
if os.name == "nt":
    BUILT = os.path.join("build", "win", "owsandbox.dll")
    SYSTEM_NAME = "owsandbox.dll"
else:
    BUILT = "libowsandbox.so"
    SYSTEM_NAME = SONAME


class Code(enum.IntEnum):
    """The library's error codes (OWS_E* in owsandbox.h)."""

    OK = 0
    EINVAL = -1
    ENOMEM = -2
    ESYS = -3
    EUNSUPPORTED = -4
    EVERIFY = -5
    ESETUP = -6
    EPERM = -7
    ESPAWN = -8
    ESTATE = -9
    ENOTFOUND = -10
    ETIMEDOUT = -11
    ECONFIG = -12
    ENOSYS = -13


def _code_name(code: int) -> str:
    try:
        return "OWS_" + Code(code).name
    except ValueError:
        return "OWS_E%d" % -code


class Error(Exception):
    """A refusal or failure of the library: what failed, where, and the one
    thing to do about it (the fields of ows_error)."""

    code: int
    name: str
    what: str
    where: str
    hint: str
    sys_errno: int

    def __init__(self, code: int, what: str = "", where: str = "", hint: str = "",
                 sys_errno: int = 0, name: Optional[str] = None) -> None:
        self.code = int(code)
        self.name = name or _code_name(self.code)
        self.what, self.where, self.hint = what, where, hint
        self.sys_errno = sys_errno
        text = "%s: %s" % (self.name, what or "failed")
        if where:
            text += ": " + where
        if sys_errno:
            text += " (%s)" % os.strerror(sys_errno)
        if hint:
            text += " (%s)" % hint
        super().__init__(text)

    @classmethod
    def _from_struct(cls, err: "_Err", rc: int) -> "Error":
        code = err.code or rc
        return cls(code, _dec(err.what), _dec(err.where), _dec(err.hint), err.sys_errno)

    @classmethod
    def _from_json(cls, doc: Dict[str, Any], rc: int) -> "Error":
        return cls(int(doc.get("code", rc)), str(doc.get("what", "")),
                   str(doc.get("where", "")), str(doc.get("hint", "")),
                   name=doc.get("name"))


def _dec(b: bytes) -> str:
    return b.decode("utf-8", "replace")


class _Err(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("sys_errno", ctypes.c_int),
                ("what", ctypes.c_char * 256), ("where", ctypes.c_char * 512),
                ("hint", ctypes.c_char * 256)]


_p = ctypes.c_void_p
_pp = ctypes.POINTER(ctypes.c_void_p)
_int = ctypes.c_int
_size = ctypes.c_size_t
_str = ctypes.c_char_p
_errp = ctypes.POINTER(_Err)

OUTPUT_FN = ctypes.CFUNCTYPE(None, _p, _int, _p, _size)
EVENT_FN = ctypes.CFUNCTYPE(None, _p, _str)
ASK_FN = ctypes.CFUNCTYPE(_int, _p, ctypes.c_uint64, _str, _int)

STDIO_NULL = -1


class SpawnOptions(ctypes.Structure):
    _fields_ = [("size", _size), ("cwd", _str), ("env", ctypes.POINTER(_str)),
                ("stdio", _int * 3)]


class RunOptions(ctypes.Structure):
    _fields_ = [("size", _size), ("cwd", _str), ("env", ctypes.POINTER(_str)),
                ("input", _p), ("input_len", _size), ("timeout_ms", _int),
                ("output_limit", _size), ("on_output", OUTPUT_FN), ("output_ctx", _p)]


class RunResultStruct(ctypes.Structure):
    _fields_ = [("exit_code", _int), ("timed_out", _int),
                ("out", _p), ("out_len", _size), ("out_truncated", _int),
                ("err", _p), ("err_len", _size), ("err_truncated", _int),
                ("wall_ms", ctypes.c_int64), ("blocked_json", _p), ("enforcement", _str)]


class SessionOptions(ctypes.Structure):
    _fields_ = [("size", _size), ("events_path", _str), ("on_event", EVENT_FN),
                ("event_ctx", _p)]


# name: (restype, argtypes).  Calls of issue 11 are bound when the library
# has them; using one it lacks raises Error(ENOSYS) naming the library file.
_PROTOS: Dict[str, Any] = {
    "ows_version": (_str, []),
    "ows_err_name": (_str, [_int]),
    "ows_strerror": (_str, [_int]),
    "ows_free": (None, [_p]),
    "ows_config_load": (_int, [_str, _pp, _errp]),
    "ows_config_free": (None, [_p]),
    "ows_policy_from_json": (_int, [_str, _size, _pp, _errp]),
    "ows_policy_free": (None, [_p]),
    "ows_policy_add_folder": (_int, [_p, _str, _int, _errp]),
    "ows_policy_add_toolchain": (_int, [_p, _str, _errp]),
    "ows_session_options_init": (None, [ctypes.POINTER(SessionOptions)]),
    "ows_session_open": (_int, [_p, _p, ctypes.POINTER(SessionOptions), _pp, _errp]),
    "ows_session_close": (_int, [_p, _errp]),
    "ows_session_shutdown": (_int, [_p, _errp]),
    "ows_session_id": (_str, [_p]),
    "ows_session_provider": (_str, [_p]),
    "ows_session_enforcement": (_str, [_p]),
    "ows_session_proof_json": (_str, [_p]),
    "ows_session_private_dir": (_str, [_p]),
    "ows_session_agent_text": (_str, [_p]),
    "ows_session_allow_site": (_int, [_p, _str, _errp]),
    "ows_session_remove_site": (_int, [_p, _str, _errp]),
    "ows_session_blocked_json": (_int, [_p, ctypes.c_int64, _pp, _errp]),
    "ows_session_check_site": (_int, [_p, _str, _int, _pp, _errp]),
    "ows_session_sites_json": (_int, [_p, _pp, _errp]),
    "ows_session_set_ask": (_int, [_p, ASK_FN, _p, _int, _errp]),
    "ows_ask_answer": (_int, [ctypes.c_uint64, _int, _errp]),
    "ows_spawn_options_init": (None, [ctypes.POINTER(SpawnOptions)]),
    "ows_session_spawn": (_int, [_p, ctypes.POINTER(_str), ctypes.POINTER(SpawnOptions),
                                 _pp, _errp]),
    "ows_proc_wait": (_int, [_p, _int, ctypes.POINTER(_int), _errp]),
    "ows_proc_kill": (_int, [_p, _int, _errp]),
    "ows_proc_fd": (_int, [_p]),
    "ows_proc_signal": (_int, [_p]),
    "ows_proc_blocked_json": (_int, [_p, _pp, _errp]),
    "ows_proc_free": (None, [_p]),
    "ows_run_options_init": (None, [ctypes.POINTER(RunOptions)]),
    "ows_session_run": (_int, [_p, ctypes.POINTER(_str), ctypes.POINTER(RunOptions),
                               ctypes.POINTER(ctypes.POINTER(RunResultStruct)), _errp]),
    "ows_run_result_free": (None, [ctypes.POINTER(RunResultStruct)]),
    "ows_session_run_json": (_int, [_p, _str, _pp, _errp]),
}


class Library:
    """The loaded libowsandbox: its path, version and bound calls."""

    def __init__(self, path: str, cdll: ctypes.CDLL) -> None:
        self.path = path
        self._cdll = cdll
        self._fns: Dict[str, Callable[..., Any]] = {}
        for name, (restype, argtypes) in _PROTOS.items():
            fn = getattr(cdll, name, None)
            if fn is None:
                continue
            fn.restype = restype
            fn.argtypes = argtypes
            self._fns[name] = fn
        self.version: str = self.fn("ows_version")().decode()
        self._check_abi()

    def _check_abi(self) -> None:
        """Refuses a library of another ABI: its structs may be laid out
        otherwise, and a call through them could crash the interpreter."""
        try:
            major, minor = (int(x) for x in self.version.split(".")[:2])
        except ValueError:
            major, minor = -1, -1
        if major != ABI_MAJOR or (major == 0 and minor != ABI_MINOR):
            raise OSError("libowsandbox %s is not the ABI this package is written for (%s)"
                          % (self.version, HEADER_VERSION))

    def has(self, name: str) -> bool:
        return name in self._fns

    def fn(self, name: str) -> Callable[..., Any]:
        try:
            return self._fns[name]
        except KeyError:
            raise Error(Code.ENOSYS, "this libowsandbox has no %s()" % name, self.path,
                        "use the library of this package's version (%s): build it with "
                        "`make shared` or point OWSANDBOX_LIB at it" % HEADER_VERSION) from None


def _candidates() -> "list[str]":
    env = os.environ.get("OWSANDBOX_LIB")
    if env:
        return [env]
    found = []
    here = os.path.dirname(os.path.abspath(__file__))
    # The wheel's (make wheel): the library inside the package, beside this
    # file, with the libraries it needs (found through its RUNPATH $ORIGIN).
    bundled = os.path.join(here, SYSTEM_NAME)
    if os.path.isfile(bundled):
        found.append(bundled)
    # The build tree, when the package is used from the checkout
    # (examples/python/owsandbox/ -> the repository's root).
    root = os.path.normpath(os.path.join(here, "..", "..", ".."))
    if os.path.isfile(os.path.join(root, "include", "owsandbox.h")):
        built = os.path.join(root, BUILT)
        if os.path.isfile(built):
            found.append(built)
    # The system's (make install): this ABI's soname, else whichever
    # ldconfig knows (refused below if its ABI is another).  On Windows
    # find_library searches PATH, which CDLL("owsandbox.dll") does not.
    found.append(SYSTEM_NAME)
    system = ctypes.util.find_library("owsandbox")
    if system and system != SYSTEM_NAME:
        found.append(system)
    return found


_lock = threading.Lock()
_loaded: Optional[Library] = None


def lib() -> Library:
    """The library, loaded on first use: OWSANDBOX_LIB, else the wheel's
    (inside the package), else the build tree, else the system's (SONAME,
    else what ctypes.util.find_library finds)."""
    global _loaded
    with _lock:
        if _loaded is None:
            tried = []
            for path in _candidates():
                try:
                    _loaded = Library(path, ctypes.CDLL(path))
                    break
                except OSError as e:
                    tried.append("%s (%s)" % (path, e))
            else:
                raise Error(Code.ESETUP, "cannot load libowsandbox", "; ".join(tried),
                            "set OWSANDBOX_LIB to the library's path, or build it "
                            "(`make shared`) or install it (`make install`)")
        return _loaded


def check(rc: int, err: _Err) -> int:
    if rc < 0:
        raise Error._from_struct(err, rc)
    return rc


def take_string(ptr: ctypes.c_void_p) -> str:
    """A `char *` the library handed over: its text, then freed."""
    if not ptr.value:
        return ""
    try:
        return ctypes.string_at(ptr.value).decode("utf-8", "replace")
    finally:
        lib().fn("ows_free")(ptr)
