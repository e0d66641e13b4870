"""`gpu-finops sweep` with the local executor: every scenario replayed and built into one
database; a rerun skips what finished; a failed or killed scenario is reported and the others
are kept."""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from pathlib import Path

import duckdb
from sweeps import TINY_SCENARIOS, TINY_SWEEP, kill_sweep_spec, sweep_process, write_sweep

from gpu_finops.cli import main
from gpu_finops.sweep.task import sha256_file
from pipeline.validate import validate_db


def states(out: Path) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in (out / "state").glob("*.json") if p.stem != "database"}


def test_a_sweep_replays_every_scenario_into_one_database(local_sweep):
    db = local_sweep / "gpu-finops.duckdb"
    assert validate_db(db) == []
    with duckdb.connect(str(db), read_only=True) as con:
        runs = dict(con.execute("SELECT run_id, profile FROM dim_runs").fetchall())
        scenarios = con.execute("SELECT scenario, status, profile, scoring, queues, seed, events_sha256 "
                                "FROM sweep_scenarios ORDER BY scenario").fetchall()
    assert runs == {f"tiny4-{name}": name.split("_")[0] + ("+MostAllocated" if "Most" in name else "+LeastAllocated")
                    for name in TINY_SCENARIOS}  # the derived profiles say what they change
    assert [row[:6] for row in scenarios] == [
        (name, "ok", name.split("_")[0], name.split("_")[1], "inputs", 42) for name in TINY_SCENARIOS]
    for name, *_, recorded in scenarios:  # the hash the worker reported is the file's
        assert sha256_file(local_sweep / "runs" / name / "events.parquet") == recorded
    summary = json.loads((local_sweep / "sweep.json").read_text())
    assert [s["status"] for s in summary["scenarios"]] == ["ok"] * 4


def test_a_rerun_skips_finished_scenarios_and_runs_new_ones(local_sweep, tmp_path, capsys):
    out = tmp_path / "out"
    shutil.copytree(local_sweep, out)
    spec = write_sweep(tmp_path)
    db_mtime = (out / "gpu-finops.duckdb").stat().st_mtime_ns
    assert main(["sweep", str(spec), "--out", str(out), "-q"]) == 0
    err = capsys.readouterr().err
    assert "4 finished before, 0 to run" in err and "database unchanged" in err
    assert (out / "gpu-finops.duckdb").stat().st_mtime_ns == db_mtime
    spec.write_text(TINY_SWEEP + '\n[[scenario]]\nname = "gang-no-preemption"\nprofile = "gang-v1.37"\n'
                                 'preemption = "none"\n')
    assert main(["sweep", str(spec), "--out", str(out), "-q"]) == 0
    assert "4 finished before, 1 to run" in capsys.readouterr().err
    with duckdb.connect(str(out / "gpu-finops.duckdb"), read_only=True) as con:
        profiles = dict(con.execute("SELECT run_id, profile FROM dim_runs").fetchall())
    assert profiles["tiny4-gang-no-preemption"] == "gang-v1.37+no-preemption" and len(profiles) == 5


def test_a_failed_scenario_is_reported_and_the_others_are_built(tmp_path, capsys):
    spec = write_sweep(tmp_path, """\
[sweep]
name = "mixed"
[inputs]
preset = "tiny"
[[scenario]]
name = "good"
profile = "kube-default"
[[scenario]]
name = "typo"
profile = "kube-default"
scoring = "MostAlocated"
""")
    out = tmp_path / "out"
    assert main(["sweep", str(spec), "--out", str(out), "-q"]) == 1  # one scenario failed
    captured = capsys.readouterr()
    assert "✗ typo: typo.toml: field 'extension_points.score': unknown plugin 'MostAlocated'" in captured.err
    assert "failed typo" in captured.out
    assert (out / "logs" / "typo.log").read_text().startswith("typo.toml")
    with duckdb.connect(str(out / "gpu-finops.duckdb"), read_only=True) as con:
        assert con.execute("SELECT run_id FROM dim_runs").fetchall() == [("mixed-good",)]
        assert con.execute("SELECT status, error LIKE '%unknown plugin%' FROM sweep_scenarios "
                           "WHERE scenario = 'typo'").fetchone() == ("failed", True)
    spec.write_text(spec.read_text().replace("MostAlocated", "MostAllocated"))  # fixed: only it runs again
    assert main(["sweep", str(spec), "--out", str(out), "-q"]) == 0
    assert "1 finished before, 1 to run" in capsys.readouterr().err
    assert {name: s["status"] for name, s in states(out).items()} == {"good": "ok", "typo": "ok"}


def test_killing_a_local_worker_fails_its_scenario_only(tmp_path):
    spec = kill_sweep_spec(tmp_path)
    out = tmp_path / "out"
    sweep = sweep_process(spec, out, "--workers", "2")
    running = out / "state" / "victim.running"
    deadline = time.monotonic() + 120
    while not running.is_file() and time.monotonic() < deadline and sweep.poll() is None:
        time.sleep(0.05)
    pid = int(json.loads(running.read_text())["where"].removeprefix("pid "))
    os.kill(pid, signal.SIGKILL)  # really kill the worker process replaying the victim
    stdout, stderr = sweep.communicate(timeout=300)
    assert sweep.returncode == 1, stderr
    assert "✗ victim: worker process killed by SIGKILL before it finished" in stderr
    result = states(out)
    assert {name: s["status"] for name, s in result.items()} == {"victim": "failed", "gang": "ok", "default": "ok"}
    with duckdb.connect(str(out / "gpu-finops.duckdb"), read_only=True) as con:
        assert sorted(r[0] for r in con.execute("SELECT run_id FROM dim_runs").fetchall()) == ["kill-default",
                                                                                            "kill-gang"]
    assert not running.exists() and not (out / "runs" / "victim").exists()
