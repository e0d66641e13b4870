"""`advise preemption`: known answers on tiny generated scenarios (tests/advise/preemption_cases.py)."""

from __future__ import annotations

import csv
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest

from gpu_finops.advise.preemption_figures import replay_figures
from gpu_finops.cli import main
from gpu_finops.trace_policy import TracePolicy, apply_trace_policy
from scheduler.commands import replay
from tests.advise.preemption_cases import cascade_case, steady_rate_case


def _advise(files: dict[str, Path], out: Path, *extra: str) -> int:
    return main(["advise", "preemption", "--trace", str(files["trace"]), "--cluster", str(files["cluster"]),
                 "--prices", str(files["prices"]), "--profile", str(files["profile"]), "--out", str(out), "-q",
                 "--workers", "2", *extra])


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def cascade(tmp_path_factory) -> tuple[dict[str, Path], Path]:
    folder = tmp_path_factory.mktemp("cascade")
    files = cascade_case(folder / "inputs")
    assert _advise(files, folder / "out") == 0
    return files, folder / "out"


@pytest.fixture(scope="module")
def steady(tmp_path_factory) -> tuple[dict[str, Path], Path]:
    folder = tmp_path_factory.mktemp("steady")
    files = steady_rate_case(folder / "inputs")
    assert _advise(files, folder / "out") == 0
    return files, folder / "out"


def test_a_class_whose_preemptions_cascade_is_advised_not_to_preempt(cascade):
    _, out = cascade
    classes = {int(r["priority"]): r for r in _rows(out / "classes.csv")}
    assert int(classes[1000]["cascaded_preempted_pods"]) > 0  # its victims went on to preempt others
    candidates = {r["candidate"]: r for r in _rows(out / "candidates.csv")}
    assert candidates["never-1000"]["recommended"] == "True"
    assert ["preemption_policy", "priority 1000", "preemption_policy", "never"] in [
        list(r.values()) for r in _rows(out / "overrides.csv")]


def test_the_replayed_recommendation_loses_fewer_gpu_hours_than_today_beyond_the_spread(cascade):
    _, out = cascade
    replays = _rows(out / "replays.csv")
    today = {r["seed"]: float(r["waste_gpu_hours"]) for r in replays if r["candidate"] == "today"}
    recommended = {r["seed"]: float(r["waste_gpu_hours"]) for r in replays if r["candidate"] == "recommended"}
    assert set(today) == set(recommended) == {"42", "43", "44"}
    saved = [today[seed] - recommended[seed] for seed in today]
    spread = max(max(today.values()) - min(today.values()), max(saved) - min(saved))
    assert min(saved) > 0 and sum(saved) / len(saved) > spread
    frame = pl.read_parquet(out / "candidates.parquet")
    assert frame.filter(pl.col("candidate") == "recommended")["beyond_spread"].to_list() == [True]


def test_replay_accepts_the_recommended_profile_and_trace(cascade, tmp_path):
    files, out = cascade
    result = replay(out / "recommended-trace.csv", files["cluster"], tmp_path / "run",
                    profile=str(out / "recommended-profile.toml"), seed=42)
    assert result.rejected_rows == 0
    ours = pq.read_table(tmp_path / "run" / "events.parquet").drop(["message"]).to_pylist()
    advised = pq.read_table(out / "runs" / "recommended-s42" / "events.parquet").drop(["message"]).to_pylist()
    assert ours == advised


def test_the_advised_checkpoint_interval_is_near_the_replayed_optimum(steady, tmp_path):
    files, out = steady
    kinds = {r["kind"]: r for r in _rows(out / "kinds.csv")}
    assert kinds["training"]["checkpoint_cost_s"] == "300.0" and float(kinds["training"]["young_daly_interval_s"]) > 0
    summary = (out / "summary.txt").read_text()
    assert "checkpoint overhead assumed: 300 s of a group's GPUs per checkpoint" in summary
    advised = next(float(r["value"]) for r in _rows(out / "overrides.csv") if r["column"] == "checkpoint_interval_s")
    waste = {}
    for seconds in (600, 1200, 1800, 2700, 3600, 5400, 7200, 10800):
        trace = tmp_path / f"t{seconds}.csv"
        apply_trace_policy(files["trace"], trace, TracePolicy(checkpoint_interval_s=(("training", float(seconds)),)))
        replay(trace, files["cluster"], tmp_path / f"r{seconds}", profile=str(files["profile"]), seed=42)
        waste[seconds] = replay_figures(tmp_path / f"r{seconds}", files["prices"], 300.0).waste_gpu_hours
    best = min(waste, key=waste.__getitem__)
    assert best / 2 <= advised <= best * 2, (advised, waste)
    advised_waste = next(float(r["waste_gpu_hours"]) for r in _rows(out / "replays.csv")
                         if r["candidate"] == f"training-ckpt{advised:g}s" and r["seed"] == "42")
    assert advised_waste <= waste[best] * 1.1, (advised_waste, waste)


def test_bad_input_is_one_line_and_writes_nothing(tmp_path, capsys):
    files = steady_rate_case(tmp_path / "inputs")
    assert _advise(files, tmp_path / "out", "--seeds", "0") == 2
    assert "--seeds" in capsys.readouterr().err and not (tmp_path / "out").exists()
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "summary.txt").write_text("mine\n")
    assert _advise(files, tmp_path / "out") == 2
    err = capsys.readouterr().err
    assert "summary.txt" in err and len(err.strip().splitlines()) == 1
    assert (tmp_path / "out" / "summary.txt").read_text() == "mine\n" and not (tmp_path / "out" / "runs").exists()


def test_a_class_whose_work_would_wait_for_hours_is_not_advised_to_stop_preempting(steady):
    _, out = steady
    candidates = {r["candidate"]: r for r in _rows(out / "candidates.csv")}
    assert candidates["never-1000"]["recommended"] == "False"
    assert float(candidates["never-1000"]["wait_gpu_hours_change"]) > 0


def test_a_rerun_replaces_its_own_files_and_a_quiet_trace_advises_nothing(tmp_path, capsys):
    files = steady_rate_case(tmp_path / "inputs")
    files["trace"].write_text("workload_id,submit_time,duration_s,pods,gpus_per_pod,priority,kind\n"
                              "solo,0,3600,1,8,0,training\n")
    for _ in range(2):
        assert _advise(files, tmp_path / "out", "--seeds", "1") == 0
    assert "no change saves beyond the spread" in capsys.readouterr().out
    assert "its scheduler preempts nothing" not in (tmp_path / "out" / "summary.txt").read_text()
    assert main(["advise", "preemption", "--trace", str(files["trace"]), "--cluster", str(files["cluster"]),
                 "--prices", str(files["prices"]), "--out", str(tmp_path / "default"), "-q", "--seeds", "1"]) == 0
    assert ("profile gang-v1.37: its scheduler preempts nothing (GPUs claimed through DRA, before KEP-5690: "
            "dra_preemption = false); only Kueue's evictions are priced, and no --queues was given"
            ) in (tmp_path / "default" / "summary.txt").read_text()
    assert [r["candidate"] for r in _rows(tmp_path / "out" / "candidates.csv")] == ["today"]
    assert (tmp_path / "out" / "recommended-trace.csv").read_text() == files["trace"].read_text()
    assert _rows(tmp_path / "out" / "overrides.csv") == []
