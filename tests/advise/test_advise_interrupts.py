"""Ctrl-C and SIGTERM stop `advise quotas` as they stop `sweep` (issue 41): exit 130, one line
`gpu-finops: interrupted`, worker processes stopped, and the interrupted trials left running in
the study, so a rerun replays them with their own parameters. Real processes, real signals
(the patterns of tests/reliability)."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import time
from pathlib import Path

import optuna

from gpu_finops.cli import main
from tests.advise.cases import advise_args, unused_quota_case
from tests.reliability.processes import cli_command, environment


def _workers(pid: int) -> set[int]:
    """The command's local worker processes: the children of its forkserver, its own child."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    children = {child for child, parent in parents.items() if parent == pid}
    return {child for child, parent in parents.items() if parent in children}


def _alive(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status")
    try:
        return "State:\tZ" not in status.read_text()
    except OSError:
        return False


def _wait_for(condition, process: subprocess.Popen, what: str, timeout_s: float = 300) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert process.poll() is None, f"the command ended before {what}: {process.communicate()[1]}"
        assert time.monotonic() < deadline, f"no {what} within {timeout_s} s"
        time.sleep(0.02)


def _start(files: dict[str, Path], out: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(cli_command(*advise_args(files, out, *extra)), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=environment())


def test_sigterm_stops_the_workers_says_one_line_and_exits_130(tmp_path):
    files = unused_quota_case(tmp_path)
    process = _start(files, tmp_path / "out", "--trials", "1", "--batch", "1", "--workers", "1")
    workers: set[int] = set()

    def replaying() -> bool:  # today's replay runs in a worker
        workers.update(_workers(process.pid))
        return bool(workers)

    _wait_for(replaying, process, "worker process")
    os.kill(process.pid, signal.SIGTERM)
    _, err = process.communicate(timeout=120)  # to the end of stderr: an orphaned worker writes there too
    assert process.returncode == 130, err
    assert err.strip().splitlines()[-1] == "gpu-finops: interrupted", err
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    time.sleep(0.5)
    assert not [pid for pid in workers if _alive(pid)], "no worker is left replaying"


def test_ctrl_c_while_a_trials_figures_are_built_stops_and_the_rerun_replays_it_with_its_own_parameters(tmp_path):
    """With one worker, trial 1 replays while trial 0's figures are built in the command's own
    process (DuckDB): a Ctrl-C there was DuckDB's `RuntimeError: Query interrupted`, recorded
    as trial 0 failing, and the study ran on."""
    files = unused_quota_case(tmp_path)
    out = tmp_path / "out"
    trials = ("--trials", "2", "--batch", "2", "--workers", "1", "--seeds", "2")
    process = _start(files, out, *trials)
    seen: set[int] = set()

    def trial_0_replayed() -> bool:
        if (out / "runs" / "trial-0000" / "run.json").exists():
            return True  # a worker seen from now on may be trial 1's: not counted as seen
        seen.update(_workers(process.pid))
        return False

    _wait_for(trial_0_replayed, process, "trial 0's run")
    # trial 1's worker starts just before trial 0's figures are built
    _wait_for(lambda: bool(_workers(process.pid) - seen), process, "trial 1's worker")
    time.sleep(0.3)  # trial 0's figures are being built now
    os.kill(process.pid, signal.SIGINT)  # the command only: as if the figures were the last thing running
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err
    assert err.strip().splitlines()[-1] == "gpu-finops: interrupted", err
    assert "Query interrupted" not in err and "Traceback" not in err, err
    assert not (out / "trials.csv").exists()
    study = optuna.load_study(study_name="advise-quotas", storage=f"sqlite:///{out / 'study.db'}")
    left = {t.number: t.params for t in study.trials}
    assert [t.state.name for t in study.trials] == ["RUNNING", "RUNNING"], "interrupted, not failed"

    assert main(advise_args(files, out, *trials)) == 0
    with (out / "trials.csv").open() as rows:
        replayed = {int(row["trial"]): row for row in csv.DictReader(rows)}
    assert sorted(replayed) == [0, 1] and all(row["state"] == "COMPLETE" for row in replayed.values())
    for number, params in left.items():
        assert {k: float(replayed[number][f"param:{k}"]) for k in params} == \
            {k: float(v) for k, v in params.items()}, "resumed with its own parameters"
