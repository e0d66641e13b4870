"""Ctrl-C stops a running DuckDB query at once (`interrupt_queries_on_ctrl_c`).

Without DuckDB's import: the CLI enters the block before it knows whether its command needs
DuckDB at all (`gpu-finops --help` stays quick). `pipeline.connect.connect` adds every
connection it opens to the block's watch.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import threading
import weakref
from collections.abc import Iterator
from contextvars import ContextVar
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection


class _CtrlCWatch:
    """The connections opened under `interrupt_queries_on_ctrl_c` (dropped as they close)."""

    def __init__(self) -> None:
        self.connections: weakref.WeakSet[DuckDBPyConnection] = weakref.WeakSet()

    def interrupt_all(self) -> None:
        for con in list(self.connections):
            with contextlib.suppress(Exception):  # closed since
                con.interrupt()


_CTRL_C_WATCH: ContextVar[_CtrlCWatch | None] = ContextVar("gpu_finops_ctrl_c_watch", default=None)


@contextlib.contextmanager
def interrupt_queries_on_ctrl_c() -> Iterator[None]:
    """While the block runs, a Ctrl-C (SIGINT) interrupts every query of the connections
    `connect` opened in it, at once.

    DuckDB's client looks for a pending Ctrl-C only between its own steps, and while a long
    query runs on its worker threads it often does not look at all: the query ran on to its
    end (or `sql`'s 60 s timeout) and then surfaced as ``RuntimeError: Query interrupted``.
    Python's own handler cannot help, it runs only when the main thread is back in Python.
    So the signal's number, which Python's C-level handler writes to the wakeup file
    descriptor at once, is read by a thread here that interrupts the queries; Python's
    handler still raises KeyboardInterrupt as soon as the main thread returns, and the CLI
    treats `pipeline.connect.is_query_interrupt` errors as that interrupt. Outside the main
    thread (the dashboard's script threads) the block only records the connections."""
    watch = _CtrlCWatch()
    token = _CTRL_C_WATCH.set(watch)
    if threading.current_thread() is not threading.main_thread():
        try:
            yield
        finally:
            _CTRL_C_WATCH.reset(token)
        return
    reader, writer = socket.socketpair()
    stop_reader, stop_writer = os.pipe()
    for end in (reader, writer):
        end.setblocking(False)
    previous_fd = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)

    def read_signals() -> None:
        while True:
            ready, _, _ = select.select([reader.fileno(), stop_reader], [], [])
            if stop_reader in ready:
                return
            with contextlib.suppress(BlockingIOError):
                if signal.SIGINT in reader.recv(64):
                    watch.interrupt_all()

    thread = threading.Thread(target=read_signals, name="ctrl-c-interrupts-queries", daemon=True)
    thread.start()
    try:
        yield
    finally:
        signal.set_wakeup_fd(previous_fd)
        os.write(stop_writer, b"x")
        thread.join()
        for end in (reader, writer):
            end.close()
        os.close(stop_reader)
        os.close(stop_writer)
        _CTRL_C_WATCH.reset(token)


def watching() -> _CtrlCWatch | None:
    """The watch of the `interrupt_queries_on_ctrl_c` block this code runs in, if any."""
    return _CTRL_C_WATCH.get()
