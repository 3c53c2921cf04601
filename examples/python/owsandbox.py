"""A Python host for libowsandbox, with nothing but ctypes.

    import owsandbox
    with owsandbox.Session({"folders": [{"path": "/home/me/project", "access": "rw"}]}) as s:
        code = s.run(["make", "test"])

Build the shared library first: `make shared` (libowsandbox.so).  Errors from
the library raise owsandbox.Error with what failed, where, and the one thing
to do about it.
"""
import ctypes
import json
import os

_here = os.path.dirname(os.path.abspath(__file__))
_lib = ctypes.CDLL(os.environ.get("OWSANDBOX_LIB", os.path.join(_here, "..", "..", "libowsandbox.so")))


class _Err(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("sys_errno", ctypes.c_int), ("what", ctypes.c_char * 256),
                ("where", ctypes.c_char * 512), ("hint", ctypes.c_char * 256)]


class Error(Exception):
    def __init__(self, err):
        self.code = err.code
        self.name = _lib.ows_err_name(err.code).decode()
        self.what, self.where, self.hint = (err.what.decode(), err.where.decode(), err.hint.decode())
        super().__init__("%s: %s: %s (%s)" % (self.name, self.what, self.where, self.hint))


_p = ctypes.c_void_p
_lib.ows_err_name.restype = ctypes.c_char_p
_lib.ows_policy_from_json.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(_p), ctypes.POINTER(_Err)]
_lib.ows_policy_free.argtypes = [_p]
_lib.ows_session_open.argtypes = [_p, _p, _p, ctypes.POINTER(_p), ctypes.POINTER(_Err)]
_lib.ows_session_close.argtypes = [_p, ctypes.POINTER(_Err)]
_lib.ows_session_proof_json.argtypes = [_p]
_lib.ows_session_proof_json.restype = ctypes.c_char_p
_lib.ows_session_enforcement.argtypes = [_p]
_lib.ows_session_enforcement.restype = ctypes.c_char_p
_lib.ows_session_spawn.argtypes = [_p, ctypes.POINTER(ctypes.c_char_p), _p, ctypes.POINTER(_p), ctypes.POINTER(_Err)]
_lib.ows_proc_wait.argtypes = [_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(_Err)]
_lib.ows_proc_free.argtypes = [_p]
_lib.ows_session_allow_site.argtypes = [_p, ctypes.c_char_p, ctypes.POINTER(_Err)]
_lib.ows_session_remove_site.argtypes = [_p, ctypes.c_char_p, ctypes.POINTER(_Err)]
_lib.ows_session_blocked_json.argtypes = [_p, ctypes.c_int64, ctypes.POINTER(ctypes.c_void_p),
                                          ctypes.POINTER(_Err)]
_lib.ows_session_agent_text.argtypes = [_p]
_lib.ows_session_agent_text.restype = ctypes.c_char_p
_lib.ows_free.argtypes = [ctypes.c_void_p]


def _check(rc, err):
    if rc < 0:
        raise Error(err)
    return rc


class Session:
    """One sandbox: opened (and proved) on entry, closed on exit."""

    def __init__(self, policy):
        err = _Err()
        pol = _p()
        doc = json.dumps(policy).encode()
        _check(_lib.ows_policy_from_json(doc, len(doc), ctypes.byref(pol), ctypes.byref(err)), err)
        self._s = _p()
        try:
            _check(_lib.ows_session_open(pol, None, None, ctypes.byref(self._s), ctypes.byref(err)), err)
        finally:
            _lib.ows_policy_free(pol)
        self.proof = json.loads(_lib.ows_session_proof_json(self._s))
        self.enforcement = _lib.ows_session_enforcement(self._s).decode()

    def run(self, argv):
        """Runs argv inside, with the host's stdio; returns its exit status."""
        err = _Err()
        args = (ctypes.c_char_p * (len(argv) + 1))(*[a.encode() for a in argv], None)
        proc = _p()
        _check(_lib.ows_session_spawn(self._s, args, None, ctypes.byref(proc), ctypes.byref(err)), err)
        code = ctypes.c_int()
        try:
            _check(_lib.ows_proc_wait(proc, -1, ctypes.byref(code), ctypes.byref(err)), err)
        finally:
            _lib.ows_proc_free(proc)
        return code.value

    def allow_site(self, pattern):
        """Opens a site for the running session (allowlist), at once."""
        err = _Err()
        _check(_lib.ows_session_allow_site(self._s, pattern.encode(), ctypes.byref(err)), err)

    def remove_site(self, pattern):
        err = _Err()
        _check(_lib.ows_session_remove_site(self._s, pattern.encode(), ctypes.byref(err)), err)

    def blocked(self, since_ms=0):
        """The sites the allow list refused since since_ms: [{"host", "port", "count", ...}]."""
        err = _Err()
        out = ctypes.c_void_p()
        _check(_lib.ows_session_blocked_json(self._s, since_ms, ctypes.byref(out), ctypes.byref(err)), err)
        try:
            return json.loads(ctypes.string_at(out.value).decode())
        finally:
            _lib.ows_free(out)

    def agent_text(self):
        """What the logins the person shared let the agent do (never where they are)."""
        return _lib.ows_session_agent_text(self._s).decode()

    def close(self):
        if self._s:
            err = _Err()
            s, self._s = self._s, None
            _check(_lib.ows_session_close(s, ctypes.byref(err)), err)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


if __name__ == "__main__":
    import sys
    folder = sys.argv[1] if len(sys.argv) > 1 else os.getcwd()
    with Session({"folders": [{"path": folder, "access": "rw"}]}) as s:
        print("proof passed:", s.proof["passed"], "enforcement:", s.enforcement)
        sys.exit(s.run(sys.argv[2:] or ["sh", "-c", "echo hello from $(id -un) in $PWD"]))
