"""The ask hook: the proxy holds a connection to a site the session does not
list and asks the host; a handler decides, on a thread or on an event loop,
and its answer goes back to the library by the ask's id."""
import asyncio
import ctypes
import inspect
import logging
import threading
from typing import Any, Awaitable, Callable, Optional, Union

from ._native import ASK_FN, lib

AskHandler = Callable[[str, int], Union[bool, Awaitable[bool]]]

_ASK_LATER = 2
_log = logging.getLogger("owsandbox")


def _answer(ask_id: int, allow: bool) -> None:
    # OWS_ENOTFOUND (timed out, its connection or session ended) is no error here
    lib().fn("ows_ask_answer")(ctypes.c_uint64(ask_id), 1 if allow else 0, None)


def _decide(handler: AskHandler, ask_id: int, host: str, port: int) -> None:
    allow = False
    try:
        allow = bool(handler(host, port))
    except Exception:  # a handler that fails refuses; the server sees why in its log
        _log.exception("owsandbox: the ask handler failed for %s:%d", host, port)
    _answer(ask_id, allow)


async def _decide_async(handler: AskHandler, ask_id: int, host: str, port: int) -> None:
    allow = False
    try:
        allow = bool(await handler(host, port))  # type: ignore[misc]
    except Exception:
        _log.exception("owsandbox: the ask handler failed for %s:%d", host, port)
    finally:
        _answer(ask_id, allow)  # also when cancelled (the loop ends): a refusal


def c_hook(handler: AskHandler, loop: Optional[asyncio.AbstractEventLoop]) -> Any:
    """The library's callback for `handler`: it returns at once (the proxy's
    thread is never held) and the handler answers later, on a thread of its
    own, or as a task on `loop` when it is a coroutine function."""
    def hook(_ctx: Any, ask_id: int, host: bytes, port: int) -> int:
        name = host.decode("ascii", "replace")
        try:
            if loop is not None:
                loop.call_soon_threadsafe(
                    lambda: loop.create_task(_decide_async(handler, ask_id, name, port)))
            else:
                threading.Thread(target=_decide, args=(handler, ask_id, name, port),
                                 name="owsandbox-ask", daemon=True).start()
        except RuntimeError:  # the loop is closed, or no thread can start: refused
            _answer(ask_id, False)
        return _ASK_LATER
    return ASK_FN(hook)


def loop_for(handler: AskHandler,
             loop: Optional[asyncio.AbstractEventLoop]) -> Optional[asyncio.AbstractEventLoop]:
    """The loop an async handler runs on (the caller's running loop unless
    named); None for a plain function."""
    if not (inspect.iscoroutinefunction(handler) or
            inspect.iscoroutinefunction(getattr(handler, "__call__", None))):
        return None
    if loop is not None:
        return loop
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        raise ValueError("an async ask handler needs its event loop: call set_ask from "
                         "the loop, or pass loop=") from None
