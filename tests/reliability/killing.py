"""Run a gpu-finops command in a child process and SIGKILL it at a chosen moment.

Children come from a multiprocessing fork server that has already imported the project, so
each command starts in milliseconds rather than seconds, and each one is a real process that
dies by SIGKILL: no ``finally`` block, no ``atexit``, no flush runs.

Two ways to pick the moment:

- ``kill_before_op=k``: the child kills itself just before its k-th file operation
  (``os.replace``, ``os.rename``, ``os.unlink``, ``shutil.rmtree``; 1-based). Renames are how
  outputs reach their final names and deletions how old ones go, so killing before each
  operation in turn visits every state between "old outputs" and "new outputs".
- ``kill_after_s=t``: the parent kills the child ``t`` seconds after it started: any moment,
  including in the middle of DuckDB or Parquet writing a file.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

# Imported once by the fork server, so that children start warm.
_PRELOAD = [
    "__main__",  # pytest's own script: imported once, not again in every child
    "gpu_finops.cli", "scheduler.commands", "pipeline.build", "dashboards.report",
    "dashboards.sql", "tests.reliability.killing",
]


@dataclass(frozen=True)
class Outcome:
    exit_code: int | None  # -9 when SIGKILL ended it
    operations: int | None  # file operations the command made, when it ran to the end
    seconds: float
    trail: tuple[str, ...] = ()  # "name path" of each of them, in order
    stdout: str = ""  # what the command printed, when it ran to the end

    @property
    def killed(self) -> bool:
        return self.exit_code == -signal.SIGKILL


def _child(argv: list[str], kill_before_op: int | None, kill_after_path: str | None, count_file: str,
           stdout_file: str) -> None:
    """Runs in the child: count (and maybe die at) file operations, then run the command."""
    trail: list[str] = []

    def counted(real):
        def operation(*args, **kwargs):
            trail.append(f"{real.__name__} {args[0] if args else ''}")
            if len(trail) == kill_before_op:
                os.kill(os.getpid(), signal.SIGKILL)
            result = real(*args, **kwargs)
            if kill_after_path is not None and args and str(args[0]).endswith(kill_after_path):
                os.kill(os.getpid(), signal.SIGKILL)
            return result

        return operation

    os.replace, os.rename, os.unlink = counted(os.replace), counted(os.rename), counted(os.unlink)
    shutil.rmtree = counted(shutil.rmtree)
    from gpu_finops.cli import main

    sys.stdout = open(stdout_file, "w", encoding="utf-8")  # noqa: SIM115 - closed by os._exit
    code = main(argv)
    Path(count_file).write_text(json.dumps(trail))
    sys.stdout.flush()
    os._exit(code)


def _context() -> multiprocessing.context.BaseContext:
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(_PRELOAD)
    return context


def run_command(
    argv: list[str], *, kill_before_op: int | None = None, kill_after_path: str | None = None,
    kill_after_s: float | None = None, timeout_s: float = 120.0,
) -> Outcome:
    """Run ``gpu-finops <argv>`` in a fresh child; see the module docstring for the kills
    (``kill_after_path``: just after the first file operation on a path ending so)."""
    with tempfile.TemporaryDirectory() as scratch:
        count_file, stdout_file = str(Path(scratch) / "operations"), str(Path(scratch) / "stdout")
        child = _context().Process(
            target=_child, args=(argv, kill_before_op, kill_after_path, count_file, stdout_file)
        )
        began = time.perf_counter()
        child.start()
        child.join(kill_after_s if kill_after_s is not None else timeout_s)
        if child.is_alive():
            if kill_after_s is None:
                child.kill()
                child.join()
                raise AssertionError(f"gpu-finops {' '.join(argv)} did not finish in {timeout_s} s")
            os.kill(child.pid, signal.SIGKILL)
            child.join()
        seconds = time.perf_counter() - began
        counted = Path(count_file)
        trail = tuple(json.loads(counted.read_text())) if counted.exists() else ()
        printed = Path(stdout_file).read_text(encoding="utf-8") if counted.exists() else ""
        return Outcome(child.exitcode, len(trail) if counted.exists() else None, seconds, trail, printed)


def _call(function, args: tuple, results) -> None:
    results.send(function(*args))


def run_in_child(function, *args):
    """``function(*args)`` in a fresh child of the warm fork server; its result (picklable).
    For measurements that need a process of their own, such as peak memory."""
    context = _context()
    receiving, sending = context.Pipe(duplex=False)
    child = context.Process(target=_call, args=(function, args, sending))
    child.start()
    result = receiving.recv()
    child.join()
    return result

