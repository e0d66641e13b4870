"""A sweep scenario that replays the trace with rightsized GPU requests (gpu_finops.rightsizing)."""

from __future__ import annotations

from pathlib import Path

import duckdb
from sweeps import write_sweep

from gpu_finops.cli import main


def test_a_rightsize_sweep_replays_smaller_requests_and_measures_waits_and_idle(tmp_path):
    """Two scenarios of the tiny preset, the requests as traced and rightsized below 50 %: the
    rightsized run holds fewer GPUs for the same work and its waits are measured."""
    spec = write_sweep(tmp_path, """\
[sweep]
name = "rs"

[inputs]
preset = "tiny"

[grid]
rightsize = ["none", 0.5]
""")
    out = tmp_path / "out"
    assert main(["sweep", str(spec), "--out", str(out), "--workers", "2", "-q"]) == 0
    traced = Path(out / "inputs" / "trace.csv").read_text().splitlines()
    rightsized = Path(out / "traces" / "rightsize-0.5.csv").read_text().splitlines()
    assert len(traced) == len(rightsized) and traced[0] == rightsized[0] and traced != rightsized
    with duckdb.connect(str(out / "gpu-finops.duckdb"), read_only=True) as con:
        scenarios = dict(con.execute("select scenario, rightsize from sweep_scenarios order by all").fetchall())
        assert scenarios == {"as-requested": None, "rightsize-0.5": 0.5}
        hints = con.execute("select count(*), sum(saving) from fct_rightsizing_hints "
                            "where run_id = 'rs-as-requested'").fetchone()
        assert hints[0] > 0 and hints[1] > 0
        # after rightsizing, no workload the rule would shrink again at the same threshold is left
        # with its old request; the allocated-idle GPU-hours fall and the waits are measured
        idle = dict(con.execute("select run_id, sum(allocated_idle_gpu_hours) from fct_gpu_efficiency "
                                "group by all").fetchall())
        assert idle["rs-rightsize-0.5"] < idle["rs-as-requested"]
        waits = dict(con.execute("select run_id, avg(wait_s) from fct_workloads where wait_s is not null "
                                 "group by all").fetchall())
        assert set(waits) == {"rs-as-requested", "rs-rightsize-0.5"}
