"""Run the real command line in a child process: exit status, output, peak memory.

For what a test cannot do inside its own process: a command that may abort (a renderer's
SIGABRT would take pytest with it), one that must run under a memory limit or whose peak
memory is the point, one that gets a Ctrl-C, one that must meet another process's lock.
In-process tests call `gpu_finops.cli.main` instead (the same code path, faster).
"""

from __future__ import annotations

import contextlib
import io
import os
import resource
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from gpu_finops.cli import main

REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Finished:
    code: int  # negative: killed by that signal (-6 is SIGABRT)
    out: str
    err: str
    peak_rss_mib: float  # of the child, from wait4's resource usage

    @property
    def traceback(self) -> bool:
        return "Traceback" in self.err or "Fatal Python error" in self.err


def environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    env.update(extra or {})
    return env


def cli_command(*argv: str) -> list[str]:
    """The console script's code path: ``python -m gpu_finops.cli …`` (calls `main`)."""
    return [sys.executable, "-m", "gpu_finops.cli", *argv]


def run(
    command: Sequence[str],
    *,
    timeout_s: float = 120,
    env: dict[str, str] | None = None,
    memory_limit_bytes: int | None = None,
    after_start: Callable[[subprocess.Popen], None] | None = None,
    cwd: Path | None = None,
) -> Finished:
    """Run ``command`` to its end (killed at ``timeout_s``), optionally under an address-space
    limit, calling ``after_start(process)`` once it runs (e.g. to send it a signal)."""

    def limit() -> None:
        if memory_limit_bytes is not None:
            resource.setrlimit(resource.RLIMIT_AS, (memory_limit_bytes, memory_limit_bytes))

    process = subprocess.Popen(
        list(command), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment(env),
        preexec_fn=limit, cwd=cwd,  # noqa: PLW1509 - only sets a resource limit
    )
    out_chunks: list[bytes] = []
    err_chunks: list[bytes] = []
    readers = [
        threading.Thread(target=lambda s=stream, c=chunks: c.append(s.read()), daemon=True)
        for stream, chunks in ((process.stderr, err_chunks), (process.stdout, out_chunks))
    ]
    readers[0].start()
    if after_start is not None:
        after_start(process)  # it may read the first bytes of stdout itself
    readers[1].start()
    deadline = time.monotonic() + timeout_s
    status, usage = 0, None
    sampled_kib = 0
    while True:
        sampled_kib = max(sampled_kib, _high_water_kib(process.pid))
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            process.kill()
            pid, status, usage = os.wait4(process.pid, 0)
            break
        time.sleep(0.02)
    process.returncode = os.waitstatus_to_exitcode(status)  # for Popen's own bookkeeping
    for reader in readers:
        reader.join(10)
    return Finished(
        process.returncode,
        b"".join(out_chunks).decode("utf-8", "replace"),
        b"".join(err_chunks).decode("utf-8", "replace"),
        # wait4's figure also counts this (large) test process's memory at the fork that
        # started the child (Linux keeps the pre-exec high-water mark), so the child's own
        # high-water mark, sampled while it ran, is preferred
        (sampled_kib or (usage.ru_maxrss if usage is not None else 0)) / 1024,
    )


def _high_water_kib(pid: int) -> int:
    """The process's own peak resident set (VmHWM) in KiB; 0 once it has exited."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def run_cli(*argv: str, **options: object) -> Finished:
    return run(cli_command(*argv), **options)  # type: ignore[arg-type]


def in_process(*argv: str) -> tuple[int, str, str]:
    """`main(argv)` in this process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([*argv, "-q"] if argv and argv[0] in _QUIET_COMMANDS else list(argv))
    return code, out.getvalue(), err.getvalue()


_QUIET_COMMANDS = {"replay", "build", "generate"}


def assert_one_line_error(command: str, code: int, err: str) -> str:
    """Exit 2 and exactly one stderr line ``gpu-finops COMMAND: …``; returns that line."""
    assert code == 2, f"exit {code}: {err}"
    lines = err.strip().splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got: {err!r}"
    assert lines[0].startswith(f"gpu-finops {command}: ") and "Traceback" not in err, err
    return lines[0]


def interrupt(process: subprocess.Popen, after_s: float) -> None:
    """Ctrl-C to ``process`` after ``after_s`` seconds (os.kill: Popen.send_signal would reap it)."""
    time.sleep(after_s)
    with contextlib.suppress(ProcessLookupError):
        os.kill(process.pid, signal.SIGINT)
