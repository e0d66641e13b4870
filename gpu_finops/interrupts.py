"""Signals for the CLI: SIGTERM as Ctrl-C for every command (workers stopped, temporary files
removed), Ctrl-C that Python could not raise where it landed, signalled again, and DuckDB's form
of a Ctrl-C (a query it stopped) raised as the interrupt it is."""

from __future__ import annotations

import _thread
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager


def raise_query_interrupt(error: BaseException) -> None:
    """Raise KeyboardInterrupt when ``error`` is a DuckDB query stopped by Ctrl-C (its
    ``RuntimeError("Query interrupted")`` or ``InterruptException``, also as the cause of
    another error); return otherwise. Code that records failures (an advise trial, a sweep
    scenario) calls it first, so an interrupt stops the command instead of counting as one
    more failure; the CLI calls it for any error that reaches it (exit 130, one line)."""
    from pipeline.connect import is_query_interrupt

    if is_query_interrupt(error):
        raise KeyboardInterrupt from error


def ignore_interrupts_from_now_on() -> None:
    """Ctrl-C ignored from here on (registered with atexit once a command's outcome is decided)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt for the block: the same clean stop as Ctrl-C (workers
    terminated, no state left `.running`, one line, exit 130)."""
    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():  # only the main thread may
        yield
        return
    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class InterruptsLostInCallbacks:
    """A Ctrl-C that lands inside a callback Python cannot raise from (the import system's
    module-lock weakref callback as a lazy import ends, a finaliser, the garbage collector) is
    "unraisable": Python prints "Exception ignored in ..." with a traceback and carries on, so
    the interrupt is lost and the command runs to its end. While installed, such an interrupt
    is signalled to the main thread again, where the command stops cleanly.

    The second signal comes from a timer thread a few milliseconds later, not from the hook:
    a signal made pending inside the hook is raised inside the hook (Python checks for signals
    after every call), where it would be unraisable again. ``settle()`` waits for that timer,
    so the interrupt is raised before the command's outcome is decided."""

    RESIGNAL_AFTER_S = 0.01

    def __init__(self) -> None:
        self._previous_hook = sys.unraisablehook
        self._timers: list[threading.Timer] = []

    def __enter__(self) -> InterruptsLostInCallbacks:
        sys.unraisablehook = self._hook
        return self

    def __exit__(self, *exc: object) -> None:
        sys.unraisablehook = self._previous_hook

    def settle(self) -> None:
        """Wait for an interrupt being signalled again: it raises KeyboardInterrupt here."""
        while self._timers:
            self._timers.pop().join()

    def _hook(self, unraisable: sys.UnraisableHookArgs) -> None:
        try:
            if isinstance(unraisable.exc_value, KeyboardInterrupt):
                self._signal_again()
                return
            self._previous_hook(unraisable)
        except KeyboardInterrupt:  # a Ctrl-C inside this hook is just as unraisable
            self._signal_again()

    def _signal_again(self) -> None:
        timer = threading.Timer(self.RESIGNAL_AFTER_S, _thread.interrupt_main)
        timer.daemon = True
        self._timers.append(timer)
        timer.start()
