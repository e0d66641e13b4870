"""`gpu-finops advise quotas` on small clusters whose best quotas are known: it recommends them,
its recommended manifests replay to the figures it reports, the same seed gives the same
trials whatever the number of workers, and a run killed mid-study resumes to the same trials."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from gpu_finops.advise.figures import RunFigures, run_figures
from gpu_finops.cli import main
from scheduler.admission.manifests import read_queue_config
from tests.advise.cases import TRIALS, advise_args, non_overlapping_case

pytestmark = pytest.mark.slow


def _gpu_quotas(path: Path) -> dict[str, tuple[int, int | None]]:
    config = read_queue_config(path)
    quotas = {}
    for name, cq in config.cluster_queues.items():
        quota = cq.quota("a100", "nvidia.com/gpu")
        assert quota is not None
        limit = quota.borrowing_limit_milli
        quotas[name] = (quota.nominal_milli // 1000, None if limit is None else limit // 1000)
    return quotas


def test_a_quota_nobody_uses_goes_to_the_team_that_waits(unused):
    files, out = unused
    assert _gpu_quotas(files["queues"]) == {"team-a": (4, None), "team-b": (4, None)}
    assert _gpu_quotas(out / "recommended.yaml") == {"team-a": (8, None), "team-b": (0, None)}
    advice = json.loads((out / "advice.json").read_text())
    chosen, today = advice["recommended"]["figures"], advice["today"]
    assert chosen["idle_cost"] < today["idle_cost"] and chosen["cost_of_delay"] < today["cost_of_delay"]
    for name in ("trials.csv", "pareto.csv", "teams.csv", "recommended.diff", "pareto.png", "pareto.html",
                 "gpu-finops.duckdb"):
        assert (out / name).stat().st_size > 0, name
    diff = (out / "recommended.diff").read_text()
    assert "-        nominalQuota: 4\n+        nominalQuota: 8" in diff
    assert not [p.name for p in out.iterdir() if p.name.startswith(".advice")]  # nothing half-written left


def _replays_to_reported(files: dict[str, Path], out: Path, folder: Path) -> None:
    """recommended.yaml replayed and built by the plain commands gives the figures advice.json reports
    for its first replay seed (the replay's default, 42)."""
    run = folder / "run"
    assert main(["replay", "--trace", str(files["trace"]), "--cluster", str(files["cluster"]), "--queues",
                 str(out / "recommended.yaml"), "--run-id", "check", "--out", str(run), "-q"]) == 0
    assert main(["build", str(run), "--prices", str(files["prices"]), "--db", str(folder / "check.duckdb"),
                 "-q"]) == 0
    reported = RunFigures.from_dict(json.loads((out / "advice.json").read_text())["recommended"]["seed_figures"][0])
    replayed = run_figures(folder / "check.duckdb", "check")
    assert replayed.as_dict() | {"run_id": reported.run_id} == reported.as_dict()


def test_the_recommended_manifests_replay_to_the_reported_figures(unused, tmp_path):
    files, out = unused
    _replays_to_reported(files, out, tmp_path)


@pytest.mark.parametrize("teams", [("a", "b"), ("x", "y", "z")])
def test_demand_that_never_overlaps_may_borrow_the_whole_cluster(tmp_path, teams):
    files = non_overlapping_case(tmp_path, teams)
    assert main(advise_args(files, tmp_path / "out", *TRIALS)) == 0
    quotas = _gpu_quotas(tmp_path / "out" / "recommended.yaml")
    assert sorted(quotas) == [f"team-{t}" for t in teams]
    for name, (nominal, borrowing) in quotas.items():
        assert borrowing is not None and nominal + borrowing >= 8, (name, nominal, borrowing)
    assert sum(nominal for nominal, _ in quotas.values()) <= 8
    advice = json.loads((tmp_path / "out" / "advice.json").read_text())
    assert advice["recommended"]["feasible"]
    assert advice["recommended"]["figures"]["cost_of_delay"] == 0
    assert advice["today"]["cost_of_delay"] > 0
    assert all(t["p95_wait_h"] <= 0.5 for t in advice["recommended"]["figures"]["teams"])
    _replays_to_reported(files, tmp_path / "out", tmp_path)


def test_killed_mid_study_it_resumes_to_the_same_trials(unused, tmp_path):
    files, reference = unused
    out = tmp_path / "out"
    command = [sys.executable, "-m", "gpu_finops.cli", *advise_args(files, out, *TRIALS, "--workers", "1")]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
                               env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    deadline = time.monotonic() + 300
    second_batch = out / "trials" / "trial-0002" / "queues.yaml"  # asked once the first batch is told
    while not second_batch.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert process.poll() is None, process.stderr.read() if process.stderr else ""
    os.killpg(process.pid, signal.SIGKILL)  # the command and its worker processes, mid-batch
    process.wait(30)
    assert not (out / "trials.csv").exists()
    assert main(advise_args(files, out, *TRIALS, "--workers", "1")) == 0
    assert (out / "trials.csv").read_text() == (reference / "trials.csv").read_text()
    assert (out / "recommended.yaml").read_text() == (reference / "recommended.yaml").read_text()


def test_a_rerun_of_a_finished_study_replays_nothing(unused, capsys):
    files, out = unused
    before = (out / "trials.csv").read_text()
    assert main(advise_args(files, out, *TRIALS)) == 0
    assert "0 replayed now" in capsys.readouterr().out
    assert (out / "trials.csv").read_text() == before


def test_other_inputs_in_the_same_folder_are_refused(unused, tmp_path, capsys):
    files, out = unused
    changed = dict(files, queues=tmp_path / "queues.yaml")
    documents = list(yaml.safe_load_all(files["queues"].read_text()))
    documents[1]["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = 3
    changed["queues"].write_text(yaml.safe_dump_all(documents))
    today = (out / "runs" / "today" / "run.json").read_bytes()
    assert main(advise_args(changed, out, *TRIALS)) == 2
    assert "holds a study of other inputs or settings (files)" in capsys.readouterr().err
    assert (out / "runs" / "today" / "run.json").read_bytes() == today  # refused before any replay
