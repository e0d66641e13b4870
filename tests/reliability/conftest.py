"""Shared set-up of the reliability suite: Hypothesis profiles and a small workspace.

Profiles: ``make test`` runs the fuzz tests under ``reliability-bounded`` (a fixed,
derandomised number of examples: the same cases on every run, the whole fuzz suite well under
a minute); ``make fuzz`` passes ``--hypothesis-profile=reliability-fuzz`` for a long
randomised run. They are registered by `profiles`, imported here, in an initial conftest of
``tests/reliability``, so that the option finds them; they are applied per test
(`profiles.fuzz_settings`), never loaded globally: other suites keep their own settings.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.reliability import profiles  # noqa: F401 - registers the profiles, for --hypothesis-profile

CLUSTER = "node,gpu_model,gpus,pricing_category\na1,A100,8,Standard\na2,A100,8,Committed\nh1,H100,8,Standard\n"
PRICES = (
    "gpu_model,list_usd_per_gpu_hour,contracted_usd_per_gpu_hour,spot_usd_per_gpu_hour\n"
    "A100,2.0,1.5,0.8\nH100,4.0,3.0,1.6\n"
)
TRACE_HEADER = "workload_id,submit_time,duration_s,pods,gpus_per_pod,gpu_model,tenant,priority\n"


def small_trace(count: int, stride_s: int) -> str:
    """``count`` plain workloads, one gang in three, a few hours long: fast under any profile."""
    rows = []
    for i in range(count):
        pods, model = (2, "A100") if i % 3 == 0 else (1, "H100" if i % 2 else "A100")
        rows.append(f"w{i:03d},{i * stride_s},{1800 + 600 * (i % 4)},{pods},{1 + i % 4},{model},"
                    f"team-{'ab'[i % 2]},{i % 3}\n")
    return TRACE_HEADER + "".join(rows)


@dataclass(frozen=True)
class Workspace:
    """Small inputs and two replays of them (read-only: copy before writing)."""

    inputs: Path  # cluster.csv, prices.csv, trace-a.csv, trace-b.csv
    run_a: Path  # trace-a, run id "a"
    run_b: Path  # trace-b, run id "b"

    def copy_runs(self, folder: Path) -> tuple[Path, Path]:
        return (Path(shutil.copytree(self.run_a, folder / "run-a")),
                Path(shutil.copytree(self.run_b, folder / "run-b")))


@pytest.fixture(scope="session")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    from scheduler.commands import replay

    root = tmp_path_factory.mktemp("reliability")
    inputs = root / "inputs"
    inputs.mkdir()
    (inputs / "cluster.csv").write_text(CLUSTER)
    (inputs / "prices.csv").write_text(PRICES)
    (inputs / "trace-a.csv").write_text(small_trace(12, 900))
    (inputs / "trace-b.csv").write_text(small_trace(7, 1300))
    runs = {}
    for run_id in ("a", "b"):
        runs[run_id] = root / f"run-{run_id}"
        replay(inputs / f"trace-{run_id}.csv", inputs / "cluster.csv", runs[run_id], run_id=run_id)
    return Workspace(inputs, runs["a"], runs["b"])
