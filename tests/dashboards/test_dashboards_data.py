"""dashboards.data against the fixture marts: numbers, filters, hostile filter values."""

from __future__ import annotations

from datetime import date

import pytest

from dashboards import data
from dashboards.errors import DashboardError

HOSTILE = ["x' OR '1'='1", "'; DROP TABLE fct_workloads; --", 'a"b', "%", "_", "\\"]


@pytest.fixture
def con(fixture_db):
    connection = data.connect_read_only(fixture_db)
    yield connection
    connection.close()


def test_pickers(con):
    assert data.list_runs(con)["run_id"].tolist() == ["demo-b", "demo-a"]  # newest first
    assert data.run_date_range(con, "demo-a") == (date(2026, 11, 2), date(2026, 11, 3))
    assert data.run_date_range(con, "nope") is None
    assert data.list_tenants(con, "demo-a") == ["ml-research", "platform", "team-o'brien"]
    assert data.list_gpu_models(con, "demo-a") == ["A100", "H100"]


def test_headline_conserves_capacity(con):
    metrics = data.headline_metrics(con, data.Filters("demo-a"))
    assert metrics["capacity_gpu_hours"] == 12 * 48
    assert metrics["gpu_hours"] == metrics["capacity_gpu_hours"]  # no team filter: all rows
    assert metrics["idle_gpu_hours"] == 440
    assert metrics["allocation_rate"] + metrics["idle_pct"] == pytest.approx(1.0)
    assert metrics["partial_placement_gpu_hours"] == 16  # gang-2: 4 A100 x 4 h
    assert metrics["total_cost"] == pytest.approx(1536.0)


def test_idle_cost_by_cause_includes_partial_placement(con):
    causes = data.idle_cost_by_cause(con, data.Filters("demo-a"))
    by_cause = dict(zip(causes["cause"], causes["gpu_hours"], strict=True))
    assert by_cause == {"fragmentation": 168, "no_demand": 272,
                        "gang_wait (partial placement)": 16}


def test_usage_over_time_and_buckets(con):
    filters = data.Filters("demo-a")
    daily = data.usage_class_over_time(con, filters, "day")
    assert daily["gpu_hours"].sum() == 576
    assert set(daily["usage_class"]) == set(data.USAGE_CLASSES)
    assert len(data.usage_class_over_time(con, filters, "hour")["period_start"].unique()) == 48
    with pytest.raises(DashboardError):
        data.usage_class_over_time(con, filters, "hour; DROP TABLE x")
    assert data.pick_time_bucket(filters, (date(2026, 11, 2), date(2026, 11, 3))) == "hour"
    assert data.pick_time_bucket(filters, (date(2026, 11, 2), date(2026, 11, 9))) == "day"


def test_costliest_workloads_and_filters(con):
    top = data.costliest_workloads(con, data.Filters("demo-a"))
    assert top["workload_id"].tolist()[0] == "train-1"
    assert top["effective_cost"].sum() == pytest.approx(368.0)  # = spend by team, all teams
    a100 = data.costliest_workloads(con, data.Filters("demo-a", gpu_models=("A100",)))
    assert set(a100["workload_id"]) == {"=SUM(A1)", "gang-2"}
    day2 = data.costliest_workloads(con, data.Filters("demo-a", date(2026, 11, 3), date(2026, 11, 3)))
    assert day2["workload_id"].tolist() == ["infer-6"]


def test_timeline_and_pending(con):
    timeline = data.workload_timeline(con, "demo-a", "gang-2")
    assert timeline["event"].tolist() == ["submitted", "pending", "reserved", "timed_out", "pending"]
    pending = data.pending_workloads(con, data.Filters("demo-a"))
    latest = dict(zip(pending["workload_id"], pending["latest_reason"], strict=True))
    assert latest == {"gang-2": "Unschedulable", "big-4": "QuotaExceeded",
                      "=SUM(A1)": "QuotaExceeded"}  # preempted and waiting again counts
    grouped = data.pending_by_reason(pending)
    assert grouped.iloc[0].to_dict()["latest_reason"] == "QuotaExceeded"
    assert grouped["workloads"].sum() == 3
    assert data.pending_workloads(con, data.Filters("demo-b")).empty
    assert data.pending_by_reason(data.pending_workloads(con, data.Filters("demo-b"))).empty
    assert data.partial_placement_workloads(con, data.Filters("demo-a"))["workload_id"].tolist() == [
        "gang-2"]


@pytest.mark.parametrize("value", HOSTILE)
def test_quotes_in_filter_values_are_harmless(con, value):
    filters = data.Filters(value, tenants=(value,), gpu_models=(value,))
    assert data.headline_metrics(con, filters)["capacity_gpu_hours"] == 0
    for query in (data.spend_by_team, data.idle_cost_by_cause, data.costliest_workloads,
                  data.partial_placement_workloads, data.pending_workloads):
        assert query(con, filters).empty
    assert data.workload_timeline(con, "demo-a", value).empty
    assert data.workload_details(con, "demo-a", value) is None
    assert data.search_workloads(con, "demo-a", value).empty  # wildcards match literally
    assert data.list_tenants(con, value) == []
    # the tables are all still there
    assert len(data.list_runs(con)) == 2


def test_tenant_with_a_quote_filters_correctly(con):
    spend = data.spend_by_team(con, data.Filters("demo-a", tenants=("team-o'brien",)))
    assert spend["tenant"].tolist() == ["team-o'brien"]
    assert data.search_workloads(con, "demo-a", "=sum")["workload_id"].tolist() == ["=SUM(A1)"]


def test_missing_db_is_a_dashboard_error(tmp_path, monkeypatch):
    with pytest.raises(DashboardError, match="not found"):
        data.connect_read_only(tmp_path / "missing.duckdb")
    with pytest.raises(DashboardError, match="GPU_FINOPS_DB"):
        data.require_db(None)
    monkeypatch.setenv(data.DB_ENV_VAR, str(tmp_path / "x.duckdb"))
    assert data.db_path_from_env() == tmp_path / "x.duckdb"


def test_connection_is_read_only(con):
    with pytest.raises(Exception, match="(?i)read-only|read only"):
        con.execute("DELETE FROM dim_runs")
