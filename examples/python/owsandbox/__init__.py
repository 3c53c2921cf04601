"""owsandbox: run an AI agent's commands behind an operating-system wall.

A Python host for libowsandbox, with nothing but ctypes::

    import owsandbox
    with owsandbox.Session(folders=[{"path": "/srv/project", "access": "rw"}],
                           network="allowlist", hosts=["pypi.org"]) as s:
        r = s.run(["make", "test"], timeout=600)
        print(r.returncode, r.text, r.blocked)

The shared library is loaded on first use: OWSANDBOX_LIB names it, else the
checkout's build tree (`make shared`; on Windows `make windows`'s
build/win/owsandbox.dll), else the system's libowsandbox.so.0.2 (`make
install`; on Windows owsandbox.dll on PATH).  Failures raise owsandbox.Error with what failed, where,
and the one thing to do about it.
"""
from ._native import SONAME, Code, Error
from ._native import lib as _lib
from ._aio import open_async
from ._proc import STDOUT, CommandNotFound
from ._session import BlockedSite, RunResult, Session, Site, SiteCheck

__version__ = "0.2.0"

# Shown as owsandbox.Error in tracebacks, not as the private module's.
for _cls in (Session, RunResult, BlockedSite, SiteCheck, Site, Error, CommandNotFound, Code):
    _cls.__module__ = __name__
del _cls
__all__ = ["Session", "open_async", "RunResult", "BlockedSite", "SiteCheck", "Site", "Error",
           "CommandNotFound", "Code", "STDOUT", "library_path", "library_version", "SONAME"]


def library_path() -> str:
    """The file of the libowsandbox in use (loading it if need be)."""
    return _lib().path


def library_version() -> str:
    """ows_version() of the libowsandbox in use."""
    return _lib().version
