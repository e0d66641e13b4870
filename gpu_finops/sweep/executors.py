"""Where a sweep's replays run: local worker processes (default) or Ray tasks.

Both run `gpu_finops.sweep.task` for each scenario and report each outcome as it comes,
through ``on_start(task, where)`` and ``on_done(outcome)``. A scenario that fails (bad input,
a bug, or its worker process killed) is reported with its error and does not stop the others.

- `LocalExecutor`: one process per scenario (forked from a server that has the scheduler
  imported), at most ``workers`` at a time. A worker that dies without an answer (killed, out
  of memory) is reported with its exit code or signal.
- `RayExecutor`: one Ray task per scenario (``ray::sweep:<scenario>`` in ``ps``), on the
  cluster at ``address`` (``auto``: the one `ray start` runs on this machine, or
  ``$RAY_ADDRESS``). Inputs are sent once to the object store and each run directory comes
  back as bytes, so workers need no shared file system, only gpu-finops installed. Tasks are
  not retried: a killed worker is a failed scenario, rerun with the next `sweep`.
"""

from __future__ import annotations

import logging
import multiprocessing
import multiprocessing.connection
import os
import shutil
import signal
import socket
import time
import traceback
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpu_finops.sweep.task import (
    ScenarioTask,
    ScenarioTimedOut,
    TaskResult,
    run_shipped,
    run_task,
    task_fields,
)
from scheduler.errors import InputError


@dataclass(frozen=True)
class Outcome:
    task: ScenarioTask
    result: TaskResult | None = None
    error: str = ""  # one line
    detail: str = ""  # a traceback, for the scenario's log
    timed_out: bool = False  # stopped at its time limit (error says so)

    @property
    def ok(self) -> bool:
        return self.result is not None


OnStart = Callable[[ScenarioTask, str], None]
OnDone = Callable[[Outcome], None]
Deliver = Callable[[ScenarioTask, dict[str, bytes]], None]


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return text if isinstance(error, InputError) else f"{type(error).__name__}: {text}"[:500]


def _child(task: ScenarioTask, connection: multiprocessing.connection.Connection) -> None:
    try:
        connection.send(("ok", run_task(task)))
    except ScenarioTimedOut as timed_out:
        connection.send(("timeout", str(timed_out), ""))
    except BaseException as error:  # everything goes back to the parent as one scenario's failure
        connection.send(("error", _one_line(error), traceback.format_exc()[-20000:]))
    finally:
        connection.close()


class LocalExecutor:
    def __init__(self, workers: int) -> None:
        self.workers = max(1, workers)

    def run(self, tasks: list[ScenarioTask], on_start: OnStart, on_done: OnDone) -> None:
        methods = multiprocessing.get_all_start_methods()
        context: Any = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
        if "forkserver" in methods:
            context.set_forkserver_preload(["gpu_finops.sweep.task", "scheduler.commands"])
        pending = deque(tasks)
        running: dict[Any, tuple[Any, multiprocessing.connection.Connection, ScenarioTask]] = {}
        answers: dict[Any, tuple] = {}
        deadlines: dict[Any, float] = {}

        def fill() -> None:
            while pending and len(running) < self.workers:
                task = pending.popleft()
                receiver, sender = context.Pipe(duplex=False)
                process = context.Process(target=_child, args=(task, sender), name=f"sweep:{task.name}",
                                          daemon=True)
                process.start()
                sender.close()
                running[process.sentinel] = (process, receiver, task)
                if task.timeout_s:
                    deadlines[process.sentinel] = time.monotonic() + task.timeout_s + STOP_GRACE_S
                on_start(task, f"pid {process.pid}")

        try:
            while pending or running:
                fill()
                connections = {entry[1]: sentinel for sentinel, entry in running.items()
                               if sentinel not in answers}
                waiting = [d for s, d in deadlines.items() if s in running and s not in answers]
                timeout = max(0.0, min(waiting) - time.monotonic()) if waiting else None
                ready_list = multiprocessing.connection.wait([*running, *connections], timeout)
                finished = [self._stop_overdue(running.pop(sentinel))
                            for sentinel in [s for s, d in deadlines.items() if s in running and s not in answers
                                             and d <= time.monotonic() and s not in ready_list]]
                for ready in ready_list:
                    if ready in connections:  # the answer comes before the process exits
                        if connections[ready] not in running:  # its exit, earlier in this list, read it
                            continue
                        try:
                            answers[connections[ready]] = ready.recv()
                        except EOFError:
                            answers[connections[ready]] = ()
                        continue
                    process, receiver, task = running.pop(ready)
                    process.join()
                    answer = answers.pop(ready, None)
                    if answer is None and receiver.poll():
                        try:
                            answer = receiver.recv()
                        except EOFError:
                            answer = None
                    receiver.close()
                    finished.append(self._outcome(task, answer, process.exitcode))
                # The next replays start before the finished ones are reported: what the caller
                # does with an outcome (advise builds it) runs beside them, not in a free slot.
                fill()
                for outcome in finished:
                    on_done(outcome)
        finally:
            for process, receiver, _ in running.values():  # interrupted: stop what still runs
                process.terminate()
                process.join(5)
                receiver.close()

    @staticmethod
    def _stop_overdue(entry: tuple[Any, multiprocessing.connection.Connection, ScenarioTask]) -> Outcome:
        """A worker past its limit that did not stop itself (stuck where Python's signal handler
        cannot run): killed, its temporary run folder removed."""
        process, receiver, task = entry
        process.kill()
        process.join(5)
        receiver.close()
        shutil.rmtree(task.run_dir.parent / f".{task.run_dir.name}.tmp-{process.pid}", ignore_errors=True)
        return Outcome(task, error=f"timed out after {task.timeout_s:g} s (the scenario time limit) and did not "
                       f"stop within {STOP_GRACE_S:g} s more: killed", timed_out=True)

    @staticmethod
    def _outcome(task: ScenarioTask, answer: tuple | None, exitcode: int | None) -> Outcome:
        if answer and answer[0] == "ok":
            return Outcome(task, result=answer[1])
        if answer and answer[0] == "error":
            return Outcome(task, error=answer[1], detail=answer[2])
        if answer and answer[0] == "timeout":
            return Outcome(task, error=answer[1], timed_out=True)
        if exitcode is not None and exitcode < 0:
            name = signal.Signals(-exitcode).name if -exitcode in signal.valid_signals() else str(-exitcode)
            return Outcome(task, error=f"worker process killed by {name} before it finished")
        return Outcome(task, error=f"worker process exited with code {exitcode} without an answer")


STOP_GRACE_S = 30.0
"""How long past its time limit a local worker may take to stop itself before it is killed."""
PROBE_TIMEOUT_S = 3.0
"""How long `RayExecutor.check` waits for the head's first answer."""


class RayExecutor:
    def __init__(self, address: str, deliver: Deliver) -> None:
        self.address = address
        self.deliver = deliver  # writes a run directory that came back as bytes

    def check(self) -> None:
        """Fail fast on an address nothing listens at: Ray itself retries for minutes."""
        host, _, port = self.address.rpartition(":")
        if self.address == "auto" or "://" in self.address or not port.isdigit():
            return
        try:
            with socket.create_connection((host or "127.0.0.1", int(port)), timeout=5) as probe:
                # Ray's head (GCS) is a gRPC server: to HTTP/2's client preface it answers with
                # a SETTINGS frame at once. Anything else (a web server, a database) would
                # leave ray.init waiting for minutes.
                probe.settimeout(PROBE_TIMEOUT_S)
                probe.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00")
                answer = b""
                while len(answer) < 9:
                    chunk = probe.recv(9 - len(answer))
                    if not chunk:
                        break
                    answer += chunk
        except TimeoutError:
            answer = b""
        except OSError as error:
            raise InputError("--address", f"cannot reach a Ray cluster at {self.address!r}: "
                             f"{error.strerror or error}") from None
        if len(answer) < 9 or answer[3] != 0x04:
            raise InputError("--address", f"{self.address!r} answers, but not as a Ray cluster does (no gRPC "
                             f"answer within {PROBE_TIMEOUT_S:.0f} s): give the head's address (ray start --head "
                             "prints it)")

    def run(self, tasks: list[ScenarioTask], on_start: OnStart, on_done: OnDone) -> None:
        try:
            import ray
            import ray.exceptions
        except ImportError:
            raise InputError("--executor", "ray is not installed: pip install 'gpu-finops[ray]' "
                             "(make install does)") from None
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        try:
            ray.init(address=self.address, logging_level=logging.ERROR, log_to_driver=False)
        except (ConnectionError, RuntimeError, ValueError) as error:
            raise InputError("--address", f"cannot reach a Ray cluster at {self.address!r}: "
                             f"{' '.join(str(error).split())[:200]}") from None
        try:
            self._run(ray, tasks, on_start, on_done)
        finally:
            ray.shutdown()

    def _run(self, ray: Any, tasks: list[ScenarioTask], on_start: OnStart, on_done: OnDone) -> None:
        remote = ray.remote(max_retries=0, num_cpus=1)(run_shipped)
        blobs: dict[Path, Any] = {}

        def blob(path: Path | None) -> Any:
            if path is None:
                return None
            if path not in blobs:
                blobs[path] = ray.put(path.read_bytes())  # each input crosses the network once
            return blobs[path]

        submitted = {}
        for task in tasks:
            reference = remote.options(name=f"sweep:{task.name}").remote(
                task_fields(task), blob(task.trace), blob(task.cluster), blob(task.queues), blob(task.profile_path))
            submitted[reference] = task
            on_start(task, "Ray task")
        while submitted:
            done, _ = ray.wait(list(submitted), num_returns=1)
            for reference in done:
                task = submitted.pop(reference)
                on_done(self._collect(ray, reference, task))

    def _collect(self, ray: Any, reference: Any, task: ScenarioTask) -> Outcome:
        try:
            result, files = ray.get(reference)
        except ray.exceptions.RayTaskError as error:  # the replay raised: its own error
            cause = getattr(error, "cause", None) or error
            return Outcome(task, error=_one_line(cause), detail=str(error)[-20000:])
        except ray.exceptions.RayError as error:  # the worker died, was killed, or the node went away
            first = " ".join(str(error).split())[:300]
            return Outcome(task, error=f"Ray worker failed before it finished ({type(error).__name__}): {first}",
                           detail=str(error)[-20000:])
        if isinstance(result, str):  # stopped at its time limit, in the Ray worker
            return Outcome(task, error=result, timed_out=True)
        self.deliver(task, files)
        return Outcome(task, result=result)
