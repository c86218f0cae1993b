"""SIGINT and SIGTERM take one clean path: within :func:`interrupts_handled` each raises an
exception where the program is, the file in progress is rolled back and the command exits
130 (SIGINT) or 143 (SIGTERM) with one line.

DuckDB turns an exception raised inside a running query into its own error ("Query
interrupted", as InterruptException or RuntimeError), so the signal is also recorded here:
:func:`is_interrupt` takes any error after a signal was seen as the interrupt, and DuckDB's
interrupt error as one even when no signal was recorded."""
from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Iterator

EXIT_CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the program is."""

    exit_code = 143


_received: dict[str, int] = {}


def signal_exit_code(exc: BaseException) -> int:
    """143 for SIGTERM, 130 for SIGINT (Ctrl-C)."""
    return getattr(exc, "exit_code", None) or _received.get("code", 130)


def is_interrupt(exc: BaseException) -> bool:
    """A signal, or the error DuckDB raised for one inside a query."""
    if isinstance(exc, KeyboardInterrupt):
        return True
    # once a signal was seen, any error is its consequence: DuckDB reports it as "Query
    # interrupted", or (when the interrupt was swallowed on the way) the next statement as
    # "Current transaction is aborted"
    if _received:
        return True
    # DuckDB's own report of a SIGINT whose handler above had not run (seen once in a full
    # test run: a file's ingest ended in "RuntimeError: Query interrupted" with nothing
    # recorded); nothing in loganalyze interrupts a query without a signal but a failed
    # part of a trace, whose own error is the one raised
    return type(exc).__name__ == "InterruptException" or (
        isinstance(exc, RuntimeError) and str(exc).strip() == "Query interrupted")


@contextmanager
def interrupts_handled() -> Iterator[None]:
    """Within the block, SIGINT raises KeyboardInterrupt and SIGTERM :class:`Terminated`, and
    both are recorded (main thread only; elsewhere the block runs as it is)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        _received["code"] = EXIT_CODES[signum]
        raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()

    old = {s: signal.signal(s, handler) for s in EXIT_CODES}
    _received.clear()
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
