"""`gpu-finops sweep --executor ray` on a real local Ray cluster (head on 127.0.0.1, 2 CPUs):
the same event logs and costs as the local executor; a killed Ray worker fails its scenario
only."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import duckdb
import pytest
from sweeps import TINY_SCENARIOS, kill_sweep_spec, sweep_process, write_sweep

from gpu_finops.cli import main
from gpu_finops.sweep.task import sha256_file

pytestmark = pytest.mark.slow


def _costs(db: Path) -> dict[str, float]:
    with duckdb.connect(str(db), read_only=True) as con:
        return dict(con.execute("SELECT x_RunId, round(sum(EffectiveCost), 6) FROM focus_cost_records "
                                "GROUP BY 1").fetchall())


def test_ray_runs_the_same_replays_as_local_workers(local_sweep, ray_address, tmp_path):
    spec = write_sweep(tmp_path)
    out = tmp_path / "out"
    assert main(["sweep", str(spec), "--out", str(out), "--executor", "ray", "--address", ray_address, "-q"]) == 0
    for name in TINY_SCENARIOS:  # byte-identical event logs, whichever executor replayed them
        assert sha256_file(out / "runs" / name / "events.parquet") == sha256_file(
            local_sweep / "runs" / name / "events.parquet"), name
        ray_run = json.loads((out / "runs" / name / "run.json").read_text())
        local_run = json.loads((local_sweep / "runs" / name / "run.json").read_text())
        assert ray_run == local_run
    assert _costs(out / "gpu-finops.duckdb") == _costs(local_sweep / "gpu-finops.duckdb")
    hosts = {json.loads((out / "state" / f"{n}.json").read_text())["result"]["host"] for n in TINY_SCENARIOS}
    assert hosts  # every scenario reports where it ran


def _ray_worker_of(scenario: str) -> int | None:
    """The pid of the Ray worker running ``scenario`` (its process title is ray::sweep:<name>)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            title = (entry / "cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
        except OSError:
            continue
        if title == f"ray::sweep:{scenario}":
            return int(entry.name)
    return None


def test_killing_a_ray_worker_fails_its_scenario_and_the_sweep_finishes(ray_address, tmp_path):
    spec = kill_sweep_spec(tmp_path)
    out = tmp_path / "out"
    sweep = sweep_process(spec, out, "--executor", "ray", "--address", ray_address)
    pid, deadline = None, time.monotonic() + 120
    while pid is None and time.monotonic() < deadline and sweep.poll() is None:
        pid = _ray_worker_of("victim")
        time.sleep(0.05)
    assert pid is not None, sweep.communicate(timeout=60)
    os.kill(pid, signal.SIGKILL)  # really kill the Ray worker process replaying the victim
    stdout, stderr = sweep.communicate(timeout=300)
    assert sweep.returncode == 1, stderr
    assert "✗ victim: Ray worker failed before it finished" in stderr
    statuses = {p.stem: json.loads(p.read_text())["status"] for p in (out / "state").glob("*.json")
                if p.stem != "database"}
    assert statuses == {"victim": "failed", "gang": "ok", "default": "ok"}
    with duckdb.connect(str(out / "gpu-finops.duckdb"), read_only=True) as con:
        assert sorted(r[0] for r in con.execute("SELECT run_id FROM dim_runs").fetchall()) == ["kill-default",
                                                                                            "kill-gang"]
    assert "failed victim" in stdout


def test_a_ray_scenario_over_its_time_limit_is_recorded_as_timed_out(ray_address, tmp_path):
    heavy = tmp_path / "heavy.csv"  # a million rows replay for a minute or more: the limit stops it inside the Ray worker
    heavy.write_text("workload_id,submit_time,duration_s,pods,gpus_per_pod\n"
                     + "".join(f"w{i},{i * 5},3600,1,1\n" for i in range(1_000_000)))
    light = tmp_path / "light.csv"
    light.write_text("workload_id,submit_time,duration_s,pods,gpus_per_pod\nw1,0,600,1,1\n")
    cluster = tmp_path / "cluster.csv"
    cluster.write_text("node,gpu_model,gpus\nn0,A100,8\nn1,A100,8\n")
    prices = tmp_path / "prices.csv"
    prices.write_text("gpu_model,list_usd_per_gpu_hour,contracted_usd_per_gpu_hour,spot_usd_per_gpu_hour\n"
                      "A100,2.0,1.5,0.8\n")
    spec = tmp_path / "sweep.toml"
    spec.write_text(f'[sweep]\nname = "limit"\nscenario_timeout_s = 5\n[inputs]\ntrace = "{light}"\n'
                    f'cluster = "{cluster}"\nprices = "{prices}"\n'
                    f'[[scenario]]\nname = "endless"\ntrace = "{heavy}"\n[[scenario]]\nname = "quick"\n')
    out = tmp_path / "out"
    assert main(["sweep", str(spec), "--out", str(out), "--executor", "ray", "--address", ray_address, "-q"]) == 1
    states = {n: json.loads((out / "state" / f"{n}.json").read_text()) for n in ("endless", "quick")}
    assert states["endless"]["status"] == "timed_out" and states["endless"]["error"].startswith("timed out after 5 s")
    assert states["quick"]["status"] == "ok"
    assert not list((out / "state").glob("*.running")) and not (out / "runs" / "endless").exists()
