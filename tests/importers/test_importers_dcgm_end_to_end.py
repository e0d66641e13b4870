"""From the cluster's own metrics to efficiency per team: a Prometheus export with
kube-state-metrics and DCGM exporter series (query_range answers, written here) is imported into
a trace with gpu_utilization, replayed, built, and read back per team by the mart, the
dashboard's data layer and the report's headline."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import duckdb
import pytest
from prometheus_export import write_export_with_dcgm

from gpu_finops.cli import main


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("dcgm-e2e")
    paths = write_export_with_dcgm(folder / "export")
    imported = folder / "imported"
    assert main(["import", "prometheus", "--series", *map(str, paths), "--out", str(imported), "-q"]) == 0
    start = json.loads((imported / "import.json").read_text())["start"]
    assert main(["replay", "--trace", str(imported / "trace.csv"), "--cluster", str(imported / "cluster.csv"),
                 "--start", start, "--run-id", "dcgm", "--out", str(folder / "run"), "-q"]) == 0
    with (imported / "cluster.csv").open() as handle:
        models = sorted({r["gpu_model"] for r in csv.DictReader(handle)})
    prices = folder / "prices.csv"
    prices.write_text("gpu_model,list_usd_per_gpu_hour,contracted_usd_per_gpu_hour,spot_usd_per_gpu_hour\n"
                      + "".join(f"{m},4.0,4.0,4.0\n" for m in models))
    db = folder / "finops.duckdb"
    assert main(["build", str(folder / "run"), "--prices", str(prices), "--db", str(db), "-q"]) == 0
    return folder


def test_the_imported_trace_carries_each_workloads_utilisation(built):
    with (built / "imported" / "trace.csv").open() as handle:
        trace = {r["workload_id"]: r["gpu_utilization"] for r in csv.DictReader(handle)}
    assert trace["ml/jobset/train"] == "0.8"  # 8 GPUs at 0.9 and 8 at 0.7, the same time
    assert (trace["ml/solo"], trace["research/eval"]) == ("0.3", "0.25")
    assert trace["ml/gone"] == "" and trace["ml/serve"] == ""  # no series: unknown


def test_efficiency_per_team_from_the_build(built):
    with duckdb.connect(str(built / "finops.duckdb"), read_only=True) as con:
        teams = {row[0]: row[1:] for row in con.execute(
            """select tenant, sum(active_gpu_hours), sum(allocated_idle_gpu_hours), sum(unmeasured_gpu_hours),
                      sum(active_gpu_hours) / nullif(sum(active_gpu_hours) + sum(allocated_idle_gpu_hours), 0),
                      sum(allocated_idle_cost)
               from fct_gpu_efficiency group by tenant""").fetchall()}
        productive = dict(con.execute("select tenant, sum(gpu_hours_productive) from fct_workloads "
                                      "group by tenant").fetchall())
    # research: eval, 4 GPUs for 1 h at 25 %: 1 active, 3 allocated idle, at 4.00 a GPU-hour (spot too)
    assert teams["research"] == pytest.approx((1.0, 3.0, 0.0, 0.25, 12.0))
    # ml: train (16 GPUs x 2 h at 0.8) and solo (2 x 0.5 h at 0.3) measured; gone and serve are not
    active, idle, unmeasured, efficiency, _ = teams["ml"]
    assert active == pytest.approx(16 * 2 * 0.8 + 2 * 0.5 * 0.3)
    assert idle == pytest.approx(16 * 2 * 0.2 + 2 * 0.5 * 0.7)
    assert unmeasured > 0 and active + idle + unmeasured == pytest.approx(productive["ml"])
    assert efficiency == pytest.approx(active / (active + idle))


def test_the_dashboard_and_the_report_show_it(built, tmp_path):
    from dashboards import data
    from dashboards.efficiency_charts import gpu_efficiency_chart

    con = data.connect_read_only(built / "finops.duckdb")
    try:
        filters = data.Filters(run_id="dcgm")
        by_team = data.gpu_efficiency(con, filters)
        held = data.allocated_idle(con, filters)
    finally:
        con.close()
    research = by_team[by_team["tenant"] == "research"].iloc[0]
    assert (research["kind"], research["efficiency"], research["allocated_idle_cost"]) == (
        "batch", pytest.approx(0.25), pytest.approx(12.0))
    assert held["allocated_idle_cost"] == pytest.approx(float(by_team["allocated_idle_cost"].sum()))
    spec = gpu_efficiency_chart(by_team, "tenant").to_dict()
    assert spec["mark"]["type"] == "bar" and {"active", "allocated idle"} <= set(
        spec["encoding"]["color"]["scale"]["domain"])
    assert main(["report", "--db", str(built / "finops.duckdb"), "--out", str(tmp_path / "report"),
                 "--format", "md", "--phase", "all", "-q"]) == 0
    text = (tmp_path / "report" / "report.md").read_text()
    assert "**Idle cost**" in text and "**Allocated-idle cost**: $" in text


def test_the_teams_and_idle_pages_show_efficiency(built, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from dashboards.data import DB_ENV_VAR

    monkeypatch.setenv(DB_ENV_VAR, str(built / "finops.duckdb"))
    app = str(Path(__file__).resolve().parents[2] / "dashboards" / "streamlit_app.py")
    at = AppTest.from_file(app, default_timeout=60).run()
    for page in ("app_pages/teams.py", "app_pages/idle.py"):
        at = at.switch_page(page).run()
        assert not at.exception and not at.error, [e.message for e in at.exception]
        if page.endswith("teams.py"):
            table = next(f.value for f in at.dataframe if "allocated_idle_gpu_hours" in f.value.columns)
            research = table[table["tenant"] == "research"].iloc[0]
            assert research["efficiency"] == pytest.approx(0.25)
        else:
            metrics = {m.label: m.value for m in at.metric}
            assert metrics["Allocated-idle cost"].startswith("$") and metrics["Efficiency (measured)"].endswith("%")
