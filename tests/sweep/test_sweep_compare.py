"""A sweep's database through the comparison surfaces: `gpu-finops compare` over any number of
runs, `gpu-finops report`'s ranking section, and every saved SQL query."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest
from sweeps import TINY_SCENARIOS

from dashboards.sql import run_sql, saved_queries
from gpu_finops.cli import main

RUNS = [f"tiny4-{name}" for name in TINY_SCENARIOS]


def test_compare_ranks_every_run_of_a_sweep_database(local_sweep, capsys):
    db = str(local_sweep / "gpu-finops.duckdb")
    assert main(["compare", "--db", db, "--all", "--format", "csv", "--baseline", RUNS[2]]) == 0
    ranking = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert sorted(ranking["run_id"]) == sorted(RUNS)
    assert ranking["rank"].tolist() == [1, 2, 3, 4]
    assert ranking["total_cost"].is_monotonic_increasing  # cheapest first
    assert ranking.set_index("run_id").loc[RUNS[2], "total_cost_vs_baseline"] == 0
    assert set(ranking["scoring"]) == {"LeastAllocated", "MostAllocated"}  # what each scenario changed
    assert main(["compare", "--db", db, *RUNS[:3], "--rank-by", "p95_wait_h"]) == 0
    out = capsys.readouterr().out
    assert "3 runs ranked by p95 wait, against tiny4-gang-v1.37_LeastAllocated" in out
    assert main(["compare", "--db", db, RUNS[0], RUNS[3]]) == 0  # two runs: also metric by metric
    out = capsys.readouterr().out
    assert "2 runs ranked" in out and "partial placement GPU-hours" in out and "gang_wait" not in out
    assert main(["compare", "--db", db, RUNS[0]]) == 2
    assert "two or more runs" in capsys.readouterr().err
    assert main(["compare", "--db", db, "--all", "--rank-by", "vibes"]) == 2
    assert "cannot rank by 'vibes'" in capsys.readouterr().err


def test_report_ranks_the_scenarios_against_the_chosen_baseline(local_sweep, tmp_path, capsys):
    db = str(local_sweep / "gpu-finops.duckdb")
    out = tmp_path / "report"
    assert main(["report", "--db", db, "--out", str(out), "--format", "html,csv,md", "--baseline", RUNS[3],
                 "--rank-by", "waste_cost"]) == 0
    ranking = pd.read_csv(out / "scenario_ranking.csv")
    assert ranking["run_id"].tolist() == ranking.sort_values(["waste_cost", "run_id"])["run_id"].tolist()
    assert ranking.set_index("run_id").loc[RUNS[3], "total_cost_vs_baseline"] == 0
    page = (out / "index.html").read_text()
    assert '<h2 id="scenario_ranking">Scenarios ranked</h2>' in page
    assert 'alt="Scenarios ranked" src="data:image/svg+xml;base64,' in page
    assert f"against the baseline {RUNS[3]}" in (out / "report.md").read_text()
    assert main(["report", "--db", db, "--out", str(tmp_path / "x"), "--baseline", "nope"]) == 2
    assert "baseline 'nope' is not in" in capsys.readouterr().err


def test_every_saved_query_answers_per_scenario_on_a_sweep_database(local_sweep):
    db = local_sweep / "gpu-finops.duckdb"
    for query in saved_queries():
        rows = json.loads(run_sql(db, None, "json", name=query.name))
        if rows and "run_id" in rows[0]:
            assert {r["run_id"] for r in rows} <= set(RUNS), query.name
    ranked = json.loads(run_sql(db, None, "json", name="scenarios_ranked"))
    assert sorted(r["run_id"] for r in ranked) == sorted(RUNS) and ranked[0]["rank"] == 1
    joined = json.loads(run_sql(db, "SELECT s.scoring, count(*) AS runs FROM dim_runs r "
                                    "JOIN sweep_scenarios s USING (run_id) GROUP BY 1 ORDER BY 1", "json"))
    assert joined == [{"scoring": "LeastAllocated", "runs": 2}, {"scoring": "MostAllocated", "runs": 2}]


@pytest.mark.parametrize("statement", ["DROP TABLE sweep_scenarios", "DELETE FROM sweep_scenarios"])
def test_the_scenario_table_is_read_only_like_the_marts(local_sweep, statement):
    from dashboards.errors import DashboardError

    with pytest.raises(DashboardError, match="refused"):
        run_sql(local_sweep / "gpu-finops.duckdb", statement, "json")
