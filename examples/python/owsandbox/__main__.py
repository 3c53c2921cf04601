"""python -m owsandbox FOLDER [COMMAND...]: runs COMMAND (default: a greeting)
in a session with FOLDER read-write, with this terminal's stdin, stdout and
stderr, and exits with its status."""
from __future__ import annotations

import ctypes
import os
import sys
from typing import List

from ._native import _Err, check, lib
from ._session import Session, _argv, _strv


def _run_here(session: Session, argv: List[str]) -> int:
    """The command with the host's own stdio (ows_spawn_options_init's default)."""
    L, err = lib(), _Err()
    proc, code = ctypes.c_void_p(), ctypes.c_int()
    with session._h.use("owsandbox") as ptr:
        check(L.fn("ows_session_spawn")(ptr, _strv(_argv(argv)), None, ctypes.byref(proc),
                                        ctypes.byref(err)), err)
    try:
        with session._h.use("owsandbox") as _:
            check(L.fn("ows_proc_wait")(proc, -1, ctypes.byref(code), ctypes.byref(err)), err)
    finally:
        L.fn("ows_proc_free")(proc)
    return code.value


def main(args: List[str]) -> int:
    folder = os.path.abspath(args[0]) if args else os.getcwd()
    command = args[1:] or ["sh", "-c", "echo hello from $(id -un) in $PWD"]
    with Session(folders=[{"path": folder, "access": "rw"}]) as s:
        print("proof passed:", s.proof.get("passed"), "enforcement:", s.enforcement,
              flush=True)
        return _run_here(s, command)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
